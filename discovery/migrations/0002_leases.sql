-- The DHCP leases reds was told of (a lease event of a MAC unknown to HSM)
-- that have not ended, with their address: the discovery token acts only
-- for such a MAC (credentials.go). Kept so a restarted reds still knows a
-- BMC whose lease stands: bss publishes no event for a renewal.
CREATE TABLE leases (
    mac     TEXT PRIMARY KEY,
    ip      TEXT NOT NULL,
    updated INTEGER NOT NULL            -- Unix seconds
);
