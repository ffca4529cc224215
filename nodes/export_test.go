package nodes

import (
	"context"

	"github.com/hmsuite/hms/nodes/wire"
)

// PlanFor plans res on an empty daemon against the services of b, for the
// benchmark that times the writes alone.
func PlanFor(ctx context.Context, b Backend, res []wire.Resource) (*Writes, error) {
	in, err := normalise(res)
	if err != nil {
		return nil, err
	}
	st := &State{Nodes: in.nodes, Profiles: in.profiles, Groups: in.groups}
	return b.Plan(ctx, st, st, nil)
}
