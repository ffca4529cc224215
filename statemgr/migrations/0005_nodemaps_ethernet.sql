-- Default NID/Role/SubRole per node xname (/Defaults/NodeMaps).
CREATE TABLE node_maps (
    id       TEXT PRIMARY KEY,
    nid      INTEGER NOT NULL UNIQUE,
    role     TEXT NOT NULL DEFAULT '',
    sub_role TEXT NOT NULL DEFAULT ''
);

-- Component Ethernet interfaces (/Inventory/EthernetInterfaces): the MAC to IP
-- to xname table DHCP and discovery write. An empty component_id is an unknown MAC.
CREATE TABLE eth_interfaces (
    id           TEXT PRIMARY KEY,
    description  TEXT NOT NULL DEFAULT '',
    mac_address  TEXT NOT NULL,
    last_update  TEXT NOT NULL,
    component_id TEXT NOT NULL DEFAULT '',
    type         TEXT NOT NULL DEFAULT ''
);
CREATE INDEX eth_interfaces_component ON eth_interfaces (component_id);

CREATE TABLE eth_ip_addresses (
    eth_id     TEXT NOT NULL REFERENCES eth_interfaces (id) ON DELETE CASCADE,
    ip_address TEXT NOT NULL,
    network    TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (eth_id, ip_address)
);
CREATE INDEX eth_ip_addresses_ip ON eth_ip_addresses (ip_address);
