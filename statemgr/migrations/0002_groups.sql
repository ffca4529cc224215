-- Groups and partitions share one table; type tells them apart. Group labels and
-- partition names therefore share one namespace.
CREATE TABLE component_groups (
    name            TEXT PRIMARY KEY,
    type            TEXT NOT NULL CHECK (type IN ('group', 'partition')),
    description     TEXT NOT NULL DEFAULT '',
    tags            TEXT NOT NULL DEFAULT '[]', -- JSON array of strings
    exclusive_group TEXT NOT NULL DEFAULT ''    -- groups only; '' = not exclusive
);

-- exclusive_key is what makes a membership exclusive: '#partition' for partition
-- members (labels cannot contain '#'), the group's exclusive_group label for members
-- of an exclusive group, NULL otherwise. The unique index then enforces "at most one
-- partition per component" and "at most one group per exclusive label" even if two
-- writers race past the friendlier checks the store makes first.
CREATE TABLE component_group_members (
    group_name    TEXT NOT NULL REFERENCES component_groups(name) ON DELETE CASCADE,
    component_id  TEXT NOT NULL REFERENCES components(id) ON DELETE CASCADE,
    exclusive_key TEXT,
    PRIMARY KEY (group_name, component_id)
);
CREATE UNIQUE INDEX component_group_members_exclusive
    ON component_group_members (component_id, exclusive_key) WHERE exclusive_key IS NOT NULL;
-- Covers the per-component membership scan (/memberships, the components filters).
CREATE INDEX component_group_members_component ON component_group_members (component_id, group_name, exclusive_key);
