-- The component history by component: the history of given xnames (GET
-- /State/Components/History/{xname}, ?id=) matched ids LIKE '%,x1,%' over
-- every row of 0018. Now each ID of a row of at most 64 IDs (the changes
-- of one or a few components, as heartbeats and single PATCHes make them)
-- is also a row of component_history_ids, with the row's seq and the ID's
-- position in it, found by an index on the ID; such a row has byid 1.
-- The rest (bulk changes, and the rows recorded before this migration)
-- have byid 0 and are still matched by their ids, through a partial index
-- that holds only them. The primary key (seq, pos) serves the pruning,
-- oldest seqs first.
CREATE TABLE component_history_ids (
    seq BIGINT NOT NULL,
    pos INTEGER NOT NULL,
    id  TEXT NOT NULL,
    PRIMARY KEY (seq, pos)
);
CREATE INDEX component_history_ids_id ON component_history_ids (id, seq);
ALTER TABLE component_history ADD COLUMN byid INTEGER NOT NULL DEFAULT 0;
CREATE INDEX component_history_unindexed ON component_history (seq) WHERE byid = 0;
