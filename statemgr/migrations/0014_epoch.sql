-- Facts about this HSM database. "epoch" is set once, when the database is
-- created (unix nanoseconds): SCNs carry it so consumers can tell the Seq
-- numbers of a reset database from those of the one before.
CREATE TABLE hsm_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
