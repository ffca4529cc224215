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
	h HSM
	b *batcher[Endpoint, error]
}

func newRegistrar(h HSM) *registrar {
	r := &registrar{h: h}
	r.b = newBatcher(maxBatch, r.post)
	return r
}

// register registers e and returns once HSM has it (or refused it).
func (r *registrar) register(ctx context.Context, e Endpoint) error {
	err, cerr := r.b.call(ctx, e)
	if cerr != nil {
		return cerr
	}
	return err
}

// run POSTs batches until ctx ends.
func (r *registrar) run(ctx context.Context) { r.b.run(ctx) }

// post registers batch: one POST, or one by one if HSM refuses it whole.
func (r *registrar) post(ctx context.Context, batch []Endpoint) []error {
	errs := make([]error, len(batch))
	if len(batch) > 1 {
		eps := make([]hsm.RedfishEndpoint, len(batch))
		for i, e := range batch {
			eps[i] = endpointOf(e)
		}
		err := r.h.CreateRedfishEndpoints(ctx, eps...)
		if !errors.Is(err, problem.ErrConflict) && !errors.Is(err, problem.ErrInvalid) {
			if err != nil {
				err = fmtRegister("", err)
			}
			for i := range errs {
				errs[i] = err
			}
			return errs
		}
	}
	for i, e := range batch {
		errs[i] = registerEndpoint(ctx, r.h, e)
	}
	return errs
}
