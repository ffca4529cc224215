-- When each lease reds was told of ends (Unix seconds: the commit event's
-- Expires, else when it was noted): a lease whose expire event reds missed
-- (it was down, or the event was lost) is swept -lease-grace after it,
-- instead of acting for the discovery token forever. Rows kept before
-- this column are taken to have ended when they were stored.
ALTER TABLE leases ADD COLUMN expires INTEGER NOT NULL DEFAULT 0;
UPDATE leases SET expires = updated;
