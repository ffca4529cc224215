-- Subscriptions: one per subscriber component and agent. body is the
-- canonical Subscription JSON (filters and URL).
CREATE TABLE subscriptions (
    id         INTEGER PRIMARY KEY,
    component  TEXT    NOT NULL,
    agent      TEXT    NOT NULL,
    url        TEXT    NOT NULL,
    body       TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    UNIQUE (component, agent)
);
CREATE INDEX subscriptions_url ON subscriptions (url);

-- Undelivered SCNs, one row per subscriber URL and SCN; ids are assigned by
-- hmnfd in queueing order, so ORDER BY id is delivery order per URL.
CREATE TABLE queue (
    id          INTEGER PRIMARY KEY,
    url         TEXT    NOT NULL,
    payload     TEXT    NOT NULL,
    enqueued_at BIGINT  NOT NULL
);
CREATE INDEX queue_url ON queue (url, id);

-- Highest SCN sequence seen per component, to drop bus redeliveries.
CREATE TABLE intake_seq (
    component TEXT   PRIMARY KEY,
    seq       BIGINT NOT NULL,
    ts        BIGINT NOT NULL
);
