-- When the deliveries to a subscription began failing without a success
-- since (unix seconds; 0 while they succeed), kept across restarts so that
-- a subscription whose callback is gone for good is dropped after the relay's
-- -scn-dead-after (statemgr/scn), not kept retrying forever. Numbered 0030,
-- not 0021, to keep clear of the HSM migrations written at the same time.
ALTER TABLE scn_subscriptions ADD COLUMN failing_since BIGINT NOT NULL DEFAULT 0;
