-- A queued SCN names its subscribers (targets) as ranges of target ids
-- instead of one row per delivery: an SCN to 10,000 subscribers whose
-- targets were created together is one row here, so queueing it writes two
-- rows, not 10,000 (issue 20).
CREATE TABLE scn_targets (
    scn BIGINT NOT NULL,
    lo  BIGINT NOT NULL,
    hi  BIGINT NOT NULL,
    PRIMARY KEY (scn, lo)
);

-- Deliveries done of SCNs still owed to other targets: one row per SCN and
-- acknowledgement batch, the targets that have it as ranges "lo-hi,id,..."
-- (hmnfd parses them). An SCN's rows go with it once every target has it.
CREATE TABLE acks (
    scn     BIGINT NOT NULL,
    targets TEXT   NOT NULL
);
CREATE INDEX acks_scn ON acks (scn);

-- Every SCN up to this id is delivered to, or dropped for, this target (its
-- subscriptions were deleted or moved away), whatever scn_targets says.
ALTER TABLE targets ADD COLUMN acked BIGINT NOT NULL DEFAULT 0;

-- A pending delivery becomes a range of one target.
INSERT INTO scn_targets (scn, lo, hi) SELECT scn, target, target FROM deliveries;
DROP TABLE deliveries;
