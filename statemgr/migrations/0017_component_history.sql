-- The component history (the suite's extension GET /State/Components/History):
-- one row per State or Flag change of a component, written in the transaction
-- of the change. old_state and old_flag are '' when the change created the
-- component; cause is API, Discovery, ... ('' unknown), agent the API caller.
-- Only the newest rows are kept (hsm -state-history, -state-history-age),
-- deleted oldest first in batches. seq never goes backwards, even after
-- every row is deleted (AUTOINCREMENT; BIGSERIAL on PostgreSQL).
CREATE TABLE component_history (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    id        TEXT NOT NULL,
    ts        TEXT NOT NULL,
    old_state TEXT NOT NULL,
    old_flag  TEXT NOT NULL,
    state     TEXT NOT NULL,
    flag      TEXT NOT NULL,
    cause     TEXT NOT NULL,
    agent     TEXT NOT NULL
);
CREATE INDEX component_history_id ON component_history (id, seq);
