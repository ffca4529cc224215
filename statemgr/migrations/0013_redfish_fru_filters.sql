-- Columns for the manufacturer, partnumber and serialnumber filters of
-- GET /Inventory/HardwareByFRU, as 0011 added them to locations.
ALTER TABLE rf_hw_frus ADD COLUMN manufacturer TEXT NOT NULL DEFAULT '';
ALTER TABLE rf_hw_frus ADD COLUMN part_number TEXT NOT NULL DEFAULT '';
ALTER TABLE rf_hw_frus ADD COLUMN serial_number TEXT NOT NULL DEFAULT '';

-- Fill them from the stored bodies: a FRU carries one *FRUInfo object
-- (NodeFRUInfo, ProcessorFRUInfo, ...). Locations stored before 0011 get
-- theirs from the PopulatedFRU the same way.
UPDATE rf_hw_frus SET
    manufacturer = COALESCE(i.manufacturer, ''),
    part_number = COALESCE(i.part_number, ''),
    serial_number = COALESCE(i.serial_number, '')
FROM (SELECT f.fru_id AS fru_id,
             json_extract(j.value, '$.Manufacturer') AS manufacturer,
             json_extract(j.value, '$.PartNumber') AS part_number,
             json_extract(j.value, '$.SerialNumber') AS serial_number
      FROM rf_hw_frus f, json_each(f.body) j
      WHERE j.key LIKE '%FRUInfo' AND j.type = 'object') AS i
WHERE rf_hw_frus.fru_id = i.fru_id;

UPDATE rf_hw_locations SET
    manufacturer = COALESCE(i.manufacturer, ''),
    part_number = COALESCE(i.part_number, ''),
    serial_number = COALESCE(i.serial_number, '')
FROM (SELECT l.id AS id,
             json_extract(j.value, '$.Manufacturer') AS manufacturer,
             json_extract(j.value, '$.PartNumber') AS part_number,
             json_extract(j.value, '$.SerialNumber') AS serial_number
      FROM rf_hw_locations l, json_each(l.body, '$.PopulatedFRU') j
      WHERE j.key LIKE '%FRUInfo' AND j.type = 'object') AS i
WHERE rf_hw_locations.id = i.id
  AND rf_hw_locations.manufacturer = '' AND rf_hw_locations.part_number = '' AND rf_hw_locations.serial_number = '';
