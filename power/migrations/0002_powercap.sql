-- Power-cap tasks: one row per snapshot or patch, the whole task as JSON
-- (they are small and always read whole).
CREATE TABLE powercap_tasks (
    id         TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL, -- Unix nanoseconds
    body       TEXT NOT NULL
);
