package core

import (
	"strings"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// The two kinds of row in component_groups.
const (
	KindGroup     = "group"
	KindPartition = "partition"
)

// GroupRow is a group or a partition as the store handles it.
type GroupRow struct {
	Name, Kind, Description, Exclusive string
	Tags, Members                      []string
}

func (g GroupRow) Wire() any {
	ids := g.Members
	if ids == nil {
		ids = []string{}
	}
	if g.Kind == KindPartition {
		return hsm.Partition{Name: g.Name, Description: g.Description, Tags: g.Tags, Members: hsm.Members{IDs: ids}}
	}
	return hsm.Group{Label: g.Name, Description: g.Description, ExclusiveGroup: g.Exclusive, Tags: g.Tags, Members: hsm.Members{IDs: ids}}
}

// Label validates and normalises a group label, partition name, tag or exclusive
// Group label: lower case letters, digits, '_', '-' and '.', 1 to 255 of them.
func Label(field, v string) (string, error) {
	l := strings.ToLower(strings.TrimSpace(v))
	if l == "" {
		return "", problem.Invalidf("%s: must not be empty", field)
	}
	if len(l) > 255 {
		return "", problem.Invalidf("%s: longer than 255 characters", field)
	}
	for _, r := range l {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' && r != '-' && r != '.' {
			return "", problem.Invalidf("%s: %q has character %q; use a-z, 0-9, '_', '-' or '.'", field, v, r)
		}
	}
	return l, nil
}
