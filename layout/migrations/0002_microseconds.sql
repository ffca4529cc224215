-- Every last_updated holds Unix microseconds from now on (hardware and
-- networks held seconds, version nanoseconds). The shipped SLS keeps
-- Postgres timestamps, whose microseconds show in LastUpdatedTime; seconds
-- lost them. A version row never written is stamped at the next open
-- (Store.stampBase), as the shipped service records a base version when it
-- creates its database.
UPDATE hardware SET last_updated = last_updated * 1000000;
UPDATE networks SET last_updated = last_updated * 1000000;
UPDATE version SET last_updated = last_updated / 1000;
