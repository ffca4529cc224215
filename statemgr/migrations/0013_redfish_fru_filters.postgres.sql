-- PostgreSQL twin of 0013_redfish_fru_filters.sql (internal/sqldb runs it
-- there instead): the FRU filter columns; a new database has no stored rows
-- for the SQLite file's JSON functions to fill them from.
ALTER TABLE rf_hw_frus ADD COLUMN manufacturer TEXT NOT NULL DEFAULT '';
ALTER TABLE rf_hw_frus ADD COLUMN part_number TEXT NOT NULL DEFAULT '';
ALTER TABLE rf_hw_frus ADD COLUMN serial_number TEXT NOT NULL DEFAULT '';
