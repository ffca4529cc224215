package discovery

import (
	"context"
	"errors"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// maxBatch bounds the RedfishEndpoints POSTed to HSM at once.
const maxBatch = 100

// registrar registers RedfishEndpoints in HSM in batches (group commit):
// one POST is in flight at a time, and the endpoints that become ready
// meanwhile go together in the next, which HSM stores in one transaction.
// A lone BMC waits for nothing; 500 at once cost HSM tens of POSTs instead
// of 500, and HSM's single SQLite writer (which its walks of the new BMCs
// also need) as many commits. A batch HSM refuses whole (one endpoint
// exists, or is invalid) is retried one by one, PATCHing those that exist.
type registrar struct {
	h  HSM
	in chan regReq
}

type regReq struct {
	e    Endpoint
	done chan error
}

func newRegistrar(h HSM) *registrar { return &registrar{h: h, in: make(chan regReq)} }

// register registers e and returns once HSM has it (or refused it).
func (r *registrar) register(ctx context.Context, e Endpoint) error {
	req := regReq{e: e, done: make(chan error, 1)}
	select {
	case r.in <- req:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run POSTs batches until ctx ends.
func (r *registrar) run(ctx context.Context) {
	for {
		var batch []regReq
		select {
		case <-ctx.Done():
			return
		case req := <-r.in:
			batch = append(batch, req)
		}
	more:
		for len(batch) < maxBatch {
			select {
			case req := <-r.in:
				batch = append(batch, req)
			default:
				break more
			}
		}
		r.post(ctx, batch)
	}
}

// post registers batch: one POST, or one by one if HSM refuses it whole.
func (r *registrar) post(ctx context.Context, batch []regReq) {
	if len(batch) > 1 {
		eps := make([]hsm.RedfishEndpoint, len(batch))
		for i, req := range batch {
			eps[i] = endpointOf(req.e)
		}
		err := r.h.CreateRedfishEndpoints(ctx, eps...)
		if !errors.Is(err, problem.ErrConflict) && !errors.Is(err, problem.ErrInvalid) {
			if err != nil {
				err = fmtRegister("", err)
			}
			for _, req := range batch {
				req.done <- err
			}
			return
		}
	}
	for _, req := range batch {
		req.done <- registerEndpoint(ctx, r.h, req.e)
	}
}
