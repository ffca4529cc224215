-- Components: HSM's observed state, one row per xname.
CREATE TABLE components (
    id                   TEXT PRIMARY KEY,
    type                 TEXT NOT NULL,
    state                TEXT NOT NULL DEFAULT 'Unknown',
    flag                 TEXT NOT NULL DEFAULT 'OK',
    enabled              INTEGER NOT NULL DEFAULT 1,
    software_status      TEXT NOT NULL DEFAULT '',
    role                 TEXT NOT NULL DEFAULT '',
    sub_role             TEXT NOT NULL DEFAULT '',
    nid                  INTEGER,
    subtype              TEXT NOT NULL DEFAULT '',
    net_type             TEXT NOT NULL DEFAULT '',
    arch                 TEXT NOT NULL DEFAULT '',
    class                TEXT NOT NULL DEFAULT '',
    reservation_disabled INTEGER NOT NULL DEFAULT 0,
    locked               INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX components_nid ON components (nid) WHERE nid IS NOT NULL;
CREATE INDEX components_type_state ON components (type, state);
