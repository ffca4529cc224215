-- Each queued SCN body is stored once, however many subscribers it goes to;
-- a delivery is then one small row naming the subscriber URL (target) and
-- the SCN. For one SCN to 10,000 subscribers this writes 10,000 pairs of
-- integers instead of 10,000 copies of the body and the URL.
CREATE TABLE targets (
    id  INTEGER PRIMARY KEY,
    url TEXT    NOT NULL UNIQUE
);

-- The SCN as POSTed: a subscriber that watches only some of an SCN's
-- components gets its own row with just those. ids are assigned by hmnfd in
-- queueing order, so ORDER BY scn is delivery order per target.
CREATE TABLE scns (
    id          INTEGER PRIMARY KEY,
    body        TEXT    NOT NULL,
    enqueued_at BIGINT  NOT NULL
);

-- Undelivered SCNs per target. WITHOUT ROWID keeps it one B-tree, clustered
-- by (target, scn) (SQLite only; a Postgres migration drops the clause).
CREATE TABLE deliveries (
    target INTEGER NOT NULL,
    scn    INTEGER NOT NULL,
    PRIMARY KEY (target, scn)
) WITHOUT ROWID;
-- Finds whether an SCN is still owed to anyone, so its body can go.
CREATE INDEX deliveries_scn ON deliveries (scn);

INSERT INTO targets (url) SELECT DISTINCT url FROM queue;
INSERT INTO scns (id, body, enqueued_at) SELECT id, payload, enqueued_at FROM queue;
INSERT INTO deliveries (target, scn) SELECT t.id, q.id FROM queue q JOIN targets t ON t.url = q.url;
DROP TABLE queue;
