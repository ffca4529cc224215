-- The DHCP server's tables, in bss's database (versions 1001 and up are
-- ipxe/dhcp's). Bound and declined leases; offers live only in memory.
CREATE TABLE dhcp_leases (
    ip       TEXT PRIMARY KEY,
    mac      TEXT NOT NULL,           -- '' for a declined address
    subnet   TEXT NOT NULL,
    state    INTEGER NOT NULL,        -- 1 bound, 2 declined
    expires  INTEGER NOT NULL,        -- Unix milliseconds
    hostname TEXT NOT NULL DEFAULT '',
    known    INTEGER NOT NULL DEFAULT 0
);

-- Lease events not yet on the bus, in order; written in the transaction
-- that changes the lease, deleted once published.
CREATE TABLE dhcp_outbox (
    seq   INTEGER PRIMARY KEY AUTOINCREMENT,
    mac   TEXT NOT NULL,
    event TEXT NOT NULL               -- lease.Event JSON
);

-- Unknown MACs not yet written to HSM's EthernetInterfaces.
CREATE TABLE dhcp_hsm_pending (
    mac TEXT PRIMARY KEY,
    ip  TEXT NOT NULL
);
