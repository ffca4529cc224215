-- What -config-command did for each node, so that a restarted bos keeps
-- the results of the batches that ended (their nodes go stable or failed
-- without another run) and runs again those it interrupted (status
-- 'running'). gen numbers the runs: only the node's newest run (gen) may
-- write its result; a run outlived by a newer session's is ignored.
CREATE TABLE config_runs (
    node   TEXT PRIMARY KEY,
    config TEXT NOT NULL,
    status TEXT NOT NULL,
    error  TEXT NOT NULL DEFAULT '',
    gen    BIGINT NOT NULL DEFAULT 0
);
