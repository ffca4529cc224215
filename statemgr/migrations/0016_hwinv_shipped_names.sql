-- Hardware inventory bodies as the shipped HSM sends them: every FRU carries
-- Subtype (it was FRUSubtype, omitted when empty), and HSN NICs are
-- discriminated as HWInvByLocNodeHsnNic / HWInvByFRUNodeHsnNic.
UPDATE rf_hw_frus SET body = json_remove(json_set(body, '$.Subtype',
        COALESCE(json_extract(body, '$.FRUSubtype'), '')), '$.FRUSubtype')
 WHERE json_type(body, '$.Subtype') IS NULL;
UPDATE rf_hw_locations SET body = json_remove(json_set(body, '$.PopulatedFRU.Subtype',
        COALESCE(json_extract(body, '$.PopulatedFRU.FRUSubtype'), '')), '$.PopulatedFRU.FRUSubtype')
 WHERE json_type(body, '$.PopulatedFRU') = 'object' AND json_type(body, '$.PopulatedFRU.Subtype') IS NULL;
UPDATE rf_hw_frus SET body = json_set(body, '$.HWInventoryByFRUType', 'HWInvByFRUNodeHsnNic')
 WHERE json_extract(body, '$.HWInventoryByFRUType') = 'HWInvByFRUHSNNIC';
UPDATE rf_hw_locations SET body = json_set(body, '$.HWInventoryByLocationType', 'HWInvByLocNodeHsnNic')
 WHERE json_extract(body, '$.HWInventoryByLocationType') = 'HWInvByLocHSNNIC';
UPDATE rf_hw_locations SET body = json_set(body, '$.PopulatedFRU.HWInventoryByFRUType', 'HWInvByFRUNodeHsnNic')
 WHERE json_extract(body, '$.PopulatedFRU.HWInventoryByFRUType') = 'HWInvByFRUHSNNIC';
