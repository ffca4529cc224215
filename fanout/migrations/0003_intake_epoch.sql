-- The HSM database epoch of each component's highest SCN seen: Seq numbers
-- compare only within one epoch (a reset HSM database starts Seq again).
ALTER TABLE intake_seq ADD COLUMN epoch BIGINT NOT NULL DEFAULT 0;
