CREATE TABLE templates (
    name TEXT PRIMARY KEY,
    doc  TEXT NOT NULL
);
CREATE TABLE sessions (
    name       TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,
    doc        TEXT NOT NULL
);
CREATE TABLE components (
    id  TEXT PRIMARY KEY,
    doc TEXT NOT NULL
);
CREATE TABLE options (
    id  INTEGER PRIMARY KEY,
    doc TEXT NOT NULL
);
