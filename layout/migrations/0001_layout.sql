-- SLS schema. Reads and searches are served from the in-memory index the
-- Store builds from these tables at start, so the only index the database
-- needs is each table's primary key (cascade deletes are a range scan on it).
-- parent and type are derived from xname; they are kept as columns so the
-- file can be inspected with plain SQL.
CREATE TABLE hardware (
    xname        TEXT PRIMARY KEY,
    parent       TEXT NOT NULL,
    type         TEXT NOT NULL,
    class        TEXT NOT NULL,
    extra        TEXT,
    last_updated INTEGER NOT NULL
);

CREATE TABLE networks (
    name         TEXT PRIMARY KEY,
    doc          TEXT NOT NULL,
    last_updated INTEGER NOT NULL
);

-- One row: the change counter clients poll through /version.
CREATE TABLE version (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    counter      INTEGER NOT NULL,
    last_updated INTEGER NOT NULL
);
INSERT INTO version (id, counter, last_updated) VALUES (1, 0, 0);
