-- Boot parameter entries: one row per key (xname, tag, MAC or nid<N>).
CREATE TABLE entries (
    key        TEXT PRIMARY KEY,
    params     TEXT NOT NULL DEFAULT '',
    kernel     TEXT NOT NULL DEFAULT '',
    initrd     TEXT NOT NULL DEFAULT '',
    cloud_init TEXT NOT NULL DEFAULT '{}',
    token      TEXT NOT NULL DEFAULT ''
);

-- Kernel and initrd records: their path and the parameters every script
-- booting them gets.
CREATE TABLE images (
    kind   TEXT NOT NULL, -- 'kernel' or 'initrd'
    path   TEXT NOT NULL,
    params TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (kind, path)
);

-- When each node last fetched its boot script or user-data.
CREATE TABLE endpoint_access (
    name       TEXT NOT NULL,
    endpoint   TEXT NOT NULL,
    last_epoch INTEGER NOT NULL,
    PRIMARY KEY (name, endpoint)
);
