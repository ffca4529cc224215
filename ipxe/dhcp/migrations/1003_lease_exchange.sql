-- When the client last exchanged a message about its lease with the server
-- (Unix milliseconds; 0 for leases stored before this version) and the relay
-- (giaddr) the exchange came through ('' when direct), for hms describe node.
ALTER TABLE dhcp_leases ADD COLUMN updated BIGINT NOT NULL DEFAULT 0;
ALTER TABLE dhcp_leases ADD COLUMN relay TEXT NOT NULL DEFAULT '';
