-- Which receivers have not confirmed a node's last transition yet, so that a
-- restarted hbtd sends it again instead of losing it, and the state before
-- it (the message HSM gets depends on it: started or restarted).
ALTER TABLE hb_nodes ADD COLUMN prev_state TEXT NOT NULL DEFAULT 'unknown';
ALTER TABLE hb_nodes ADD COLUMN hsm_pending INTEGER NOT NULL DEFAULT 0;
ALTER TABLE hb_nodes ADD COLUMN bus_pending INTEGER NOT NULL DEFAULT 0;
