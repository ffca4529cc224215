-- A password handed to the node-side flow (node_creds) is needed only
-- until its BMC is registered: from then on the endpoint's own password
-- (endpoints.password, which HSM also holds) is what logs in, and
-- registration deletes the row in its transaction (Store.Register). Rows
-- kept by earlier versions are deleted here when the MAC's BMC was
-- registered (state registered, or missing since) at or after the
-- password was handed out; one handed out later (an admin's, for a BMC
-- to be set up again) is kept.
DELETE FROM node_creds WHERE EXISTS (
    SELECT 1 FROM endpoints
    WHERE endpoints.mac = node_creds.mac
      AND endpoints.state IN ('registered', 'missing')
      AND endpoints.updated >= node_creds.created
);
