-- Redfish endpoints by FQDN: every POST, PUT and PATCH of an endpoint
-- checks that no other endpoint has its FQDN, and GET ?fqdn= selects by it;
-- without an index each was a scan of every endpoint (a POST of 1,000 BMCs
-- read the table 1,000 times). Not UNIQUE: endpoints without an FQDN
-- share the empty one.
CREATE INDEX rf_endpoints_fqdn ON rf_endpoints (fqdn);
