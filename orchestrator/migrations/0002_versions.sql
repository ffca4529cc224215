-- Every write of a session or component bumps its version; a writer names
-- the version it read (UPDATE ... WHERE version = ?), so a write based on a
-- stale read is refused instead of overwriting a newer one.
ALTER TABLE sessions ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE components ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
