-- The process group (pid of its leader, /bin/sh) and the token
-- ($BOS_CONFIG_RUN) of the run a node's 'running' row belongs to, so that
-- a bos that was killed while the run went on finds what is left of it at
-- its next start and kills it before running the batch again.
ALTER TABLE config_runs ADD COLUMN pid BIGINT NOT NULL DEFAULT 0;
ALTER TABLE config_runs ADD COLUMN token TEXT NOT NULL DEFAULT '';
