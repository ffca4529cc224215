-- Transitions: one row per POST /transitions.
CREATE TABLE transitions (
    id         TEXT PRIMARY KEY,
    operation  TEXT NOT NULL,
    created_at INTEGER NOT NULL, -- Unix nanoseconds
    expires_at INTEGER NOT NULL,
    status     TEXT NOT NULL,
    deadline   INTEGER NOT NULL  -- taskDeadlineMinutes
);

-- Tasks: one row per component of a transition. step is how far the Redfish
-- sequence got, so a restarted pcs resumes rather than repeats.
CREATE TABLE tasks (
    transition_id TEXT NOT NULL REFERENCES transitions (id) ON DELETE CASCADE,
    xname         TEXT NOT NULL,
    deputy_key    TEXT NOT NULL DEFAULT '',
    status        TEXT NOT NULL,
    description   TEXT NOT NULL DEFAULT '',
    error         TEXT NOT NULL DEFAULT '',
    step          INTEGER NOT NULL DEFAULT 0,
    resv_key      TEXT NOT NULL DEFAULT '', -- our HSM reservation key, to renew or release after a restart
    ord           INTEGER NOT NULL,
    PRIMARY KEY (transition_id, xname)
);
