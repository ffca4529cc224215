-- dhcp_leases keyed by ip alone (WITHOUT ROWID): one B-tree instead of a
-- rowid table plus the primary key's index, so each lease written touches
-- half the pages.
CREATE TABLE dhcp_leases_new (
    ip       TEXT PRIMARY KEY,
    mac      TEXT NOT NULL,           -- '' for a declined address
    subnet   TEXT NOT NULL,
    state    INTEGER NOT NULL,        -- 1 bound, 2 declined
    expires  INTEGER NOT NULL,        -- Unix milliseconds
    hostname TEXT NOT NULL DEFAULT '',
    known    INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
INSERT INTO dhcp_leases_new (ip, mac, subnet, state, expires, hostname, known)
    SELECT ip, mac, subnet, state, expires, hostname, known FROM dhcp_leases;
DROP TABLE dhcp_leases;
ALTER TABLE dhcp_leases_new RENAME TO dhcp_leases;

-- From here on an outbox row holds the events of one group commit, one
-- lease.Event JSON a line, oldest first (mac is '' then; each line has its
-- MACAddress). Rows written before hold one event and its mac.
