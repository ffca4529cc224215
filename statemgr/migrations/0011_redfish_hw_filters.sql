-- Columns for the manufacturer, partnumber and serialnumber filters of
-- GET /Inventory/Hardware (taken from the populated FRU; empty when none).
ALTER TABLE rf_hw_locations ADD COLUMN manufacturer TEXT NOT NULL DEFAULT '';
ALTER TABLE rf_hw_locations ADD COLUMN part_number TEXT NOT NULL DEFAULT '';
ALTER TABLE rf_hw_locations ADD COLUMN serial_number TEXT NOT NULL DEFAULT '';
