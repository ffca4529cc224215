package group

import (
	"context"

	"github.com/hmsuite/hms/statemgr/internal/core"
)

// What the black-box tests of this package do inside.

// CreateGroup creates g in c's database.
func CreateGroup(c *core.Store, ctx context.Context, g core.GroupRow) error {
	return NewStore(c).createGroup(ctx, g)
}

// DeleteGroup deletes the group or partition name.
func DeleteGroup(c *core.Store, ctx context.Context, kind, name string) error {
	return NewStore(c).deleteGroup(ctx, kind, name)
}
