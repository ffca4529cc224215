-- Endpoints queued for a Redfish walk that has not started yet, so a restart
-- does not forget them (a started walk is marked DiscoveryStarted instead).
CREATE TABLE rf_discovery_queue (
    id TEXT PRIMARY KEY REFERENCES rf_endpoints (id) ON DELETE CASCADE
);
