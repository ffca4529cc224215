-- Multi-tenancy: a template's name is unique within its tenant ('' for
-- none), so templates are keyed by (tenant, name). Sessions keep one name
-- space; their tenant is in the document.
CREATE TABLE templates_tenant (
    tenant TEXT NOT NULL DEFAULT '',
    name   TEXT NOT NULL,
    doc    TEXT NOT NULL,
    PRIMARY KEY (tenant, name)
);
INSERT INTO templates_tenant (tenant, name, doc) SELECT '', name, doc FROM templates;
DROP TABLE templates;
ALTER TABLE templates_tenant RENAME TO templates;
