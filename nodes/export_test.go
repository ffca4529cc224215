package nodes

import (
	"context"
	"sync/atomic"

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
	return b.Plan(ctx, st, st, nil, everything())
}

// countingBox counts the credentials it opens.
type countingBox struct {
	sealer
	opens *atomic.Int64
}

func (b countingBox) Open(id string, sealed []byte) ([]byte, error) {
	b.opens.Add(1)
	return b.sealer.Open(id, sealed)
}

// CountOpens makes s count the credentials it unseals, from now on.
func CountOpens(s *Service) *atomic.Int64 {
	n := new(atomic.Int64)
	s.box = countingBox{sealer: s.box, opens: n}
	return n
}
