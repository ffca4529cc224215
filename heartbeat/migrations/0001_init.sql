-- Node heartbeat states. Only transitions are written: a row changes when a node
-- starts, is warned about, is declared dead or comes back.
CREATE TABLE hb_nodes (
    xname      TEXT PRIMARY KEY,
    state      TEXT NOT NULL,
    last_hb    INTEGER NOT NULL, -- the node's last time stamp, unix ms
    changed_at INTEGER NOT NULL  -- when the tracker changed the state, unix ms
);

-- Small key/value facts about the tracker itself, such as when it was last
-- known to be running.
CREATE TABLE hb_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
