package power

import (
	"errors"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/power/client"
	"github.com/hmsuite/hms/power/pcs"
)

// TestClient: the typed client starts, waits for and reads transitions,
// and reads power status.
func TestClient(t *testing.T) {
	e := newEnv(t, 1, nil)
	c := client.New(e.daemon.URL()+"/v1", nil, "test")
	ctx := t.Context()
	n := e.node(0)
	created, err := c.StartTransition(ctx, pcs.OpForceOff, 0, locs(n))
	if err != nil || created.Operation != pcs.OpForceOff {
		t.Fatalf("start: %+v %v", created, err)
	}
	tr, err := c.Wait(ctx, created.TransitionID, 10*time.Millisecond)
	if err != nil || tr.Status != pcs.TransitionCompleted || tr.Counts.Succeeded != 1 {
		t.Fatalf("wait: %+v %v", tr, err)
	}
	st, err := c.PowerStatus(ctx, pcs.PowerStatusRequest{Xnames: []string{n}})
	if err != nil || len(st) != 1 || st[0].PowerState != pcs.PowerOff {
		t.Errorf("power status: %+v %v", st, err)
	}
	if list, err := c.Transitions(ctx); err != nil || len(list) != 1 {
		t.Errorf("list: %+v %v", list, err)
	}
	if err := c.Abort(ctx, created.TransitionID); !errors.Is(err, problem.ErrInvalid) {
		t.Errorf("abort of a completed transition: %v, want ErrInvalid", err)
	}
	if _, err := c.StartTransition(ctx, pcs.OpOn, 0, locs("x9999c0s0b0n0")); !errors.Is(err, problem.ErrInvalid) {
		t.Errorf("unknown xname: %v, want ErrInvalid", err)
	}
}
