-- One row per BMC discovery has dealt with. Passwords are sealed with the
-- key file (internal/sealed), the xname as additional data: password is the
-- one HSM has, pending one set (or being set) on the BMC and not yet
-- registered, so a crash between the two never locks us out.
CREATE TABLE endpoints (
    xname      TEXT PRIMARY KEY,
    kind       TEXT NOT NULL,             -- 'river' or 'mountain'
    mac        TEXT NOT NULL DEFAULT '',
    ip         TEXT NOT NULL DEFAULT '',
    addr       TEXT NOT NULL DEFAULT '',  -- HOST[:PORT] the BMC answers on
    username   TEXT NOT NULL DEFAULT '',
    password   BLOB,
    pending    BLOB,
    state      TEXT NOT NULL,             -- 'pending', 'registered', 'missing', 'removed'
    updated    INTEGER NOT NULL           -- Unix seconds
);
CREATE INDEX endpoints_mac ON endpoints (mac);

-- Passwords handed to nodes booted into the discovery image (POST
-- /v1/credentials), by the MAC they asked for, sealed with the MAC as
-- additional data; the pipeline logs in with one before trying the
-- factory credentials.
CREATE TABLE node_creds (
    mac      TEXT PRIMARY KEY,
    password BLOB NOT NULL,
    created  INTEGER NOT NULL
);
