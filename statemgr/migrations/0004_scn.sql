-- The SCN outbox: one row per notification payload, appended in the same
-- transaction as the change it reports. seq never goes backwards, even after
-- compaction deletes every row (AUTOINCREMENT; BIGSERIAL on PostgreSQL).
CREATE TABLE scn_outbox (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    created TEXT NOT NULL,
    payload TEXT NOT NULL
);

-- One cursor per consumer of the outbox: 'bus' and 'sub:<id>'. A row is
-- published for a consumer once seq <= its cursor; rows every cursor has passed
-- are compacted away.
CREATE TABLE scn_cursors (
    name TEXT PRIMARY KEY,
    seq  INTEGER NOT NULL
);
INSERT INTO scn_cursors (name, seq) VALUES ('bus', 0);

-- HTTP callback subscribers (/Subscriptions/SCN). List columns hold JSON arrays.
CREATE TABLE scn_subscriptions (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    subscriber      TEXT NOT NULL,
    url             TEXT NOT NULL,
    enabled         INTEGER,
    roles           TEXT NOT NULL DEFAULT '[]',
    sub_roles       TEXT NOT NULL DEFAULT '[]',
    software_status TEXT NOT NULL DEFAULT '[]',
    states          TEXT NOT NULL DEFAULT '[]'
);
