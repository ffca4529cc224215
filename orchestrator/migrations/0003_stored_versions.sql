-- Rows stored before 0002 got version 0, which the store reads as "not
-- stored yet" for a component (it INSERTs, the row exists, and every write
-- of it was a 409). A stored row is at version 1 or more.
UPDATE components SET version = 1 WHERE version = 0;
UPDATE sessions SET version = 1 WHERE version = 0;
