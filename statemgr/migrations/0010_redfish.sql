-- Redfish endpoints (BMCs) and what discovery learns from them.
-- body columns hold the wire JSON; the other columns exist for filters.

-- cred is the AES-GCM sealed {"User","Password"} of the endpoint; body never
-- holds a credential.
CREATE TABLE rf_endpoints (
    id          TEXT PRIMARY KEY,
    type        TEXT NOT NULL,
    fqdn        TEXT NOT NULL DEFAULT '',
    uuid        TEXT NOT NULL DEFAULT '',
    mac_addr    TEXT NOT NULL DEFAULT '',
    ip_address  TEXT NOT NULL DEFAULT '',
    last_status TEXT NOT NULL DEFAULT '',
    body        TEXT NOT NULL,
    cred        BLOB
);

CREATE TABLE rf_component_endpoints (
    id           TEXT PRIMARY KEY,
    redfish_ep   TEXT NOT NULL,
    type         TEXT NOT NULL,
    redfish_type TEXT NOT NULL,
    body         TEXT NOT NULL
);
CREATE INDEX rf_component_endpoints_ep ON rf_component_endpoints (redfish_ep);

CREATE TABLE rf_service_endpoints (
    redfish_ep   TEXT NOT NULL,
    redfish_type TEXT NOT NULL,
    body         TEXT NOT NULL,
    PRIMARY KEY (redfish_type, redfish_ep)
);
CREATE INDEX rf_service_endpoints_ep ON rf_service_endpoints (redfish_ep);

-- Hardware inventory by location (body includes the PopulatedFRU) and by FRU.
CREATE TABLE rf_hw_locations (
    id         TEXT PRIMARY KEY,
    type       TEXT NOT NULL,
    redfish_ep TEXT NOT NULL,
    fru_id     TEXT NOT NULL DEFAULT '',
    body       TEXT NOT NULL
);
CREATE INDEX rf_hw_locations_ep ON rf_hw_locations (redfish_ep);

CREATE TABLE rf_hw_frus (
    fru_id TEXT PRIMARY KEY,
    type   TEXT NOT NULL,
    body   TEXT NOT NULL
);

-- One row per FRU event at a location (Added, Removed, ...), in order.
CREATE TABLE rf_hw_history (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL,
    fru_id     TEXT NOT NULL,
    ts         TEXT NOT NULL,
    event_type TEXT NOT NULL
);
CREATE INDEX rf_hw_history_id ON rf_hw_history (id);
CREATE INDEX rf_hw_history_fru ON rf_hw_history (fru_id);
