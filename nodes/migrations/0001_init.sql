-- resources holds what the nodes daemon owns: each declared ComputeNode,
-- BootProfile and NodeGroup as its JSON document. A row here is the
-- daemon's claim on the services' objects it wrote for the resource.
CREATE TABLE resources (
    kind    TEXT    NOT NULL,
    name    TEXT    NOT NULL,
    doc     TEXT    NOT NULL,
    updated BIGINT  NOT NULL, -- Unix nanoseconds: past 32 bits
    PRIMARY KEY (kind, name)
);
-- secrets holds BMC credentials sealed with the daemon's key (never plain
-- text), keyed by the bmc_credentials_file reference nodes use.
CREATE TABLE secrets (
    ref    TEXT PRIMARY KEY,
    sealed BLOB NOT NULL
);
