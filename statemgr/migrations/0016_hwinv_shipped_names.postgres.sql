-- PostgreSQL twin of 0016_hwinv_shipped_names.sql: it renames names in
-- stored rows with SQLite's JSON functions; a new database has none.
SELECT 1;
