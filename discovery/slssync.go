package discovery

import (
	"context"
	"sync"

	"github.com/hmsuite/hms/layout/sls"
)

// slsVersioner is the part of the SLS client that reads /version, a cheap
// change detector (its counter grows by one on every SLS write).
type slsVersioner interface {
	Version(ctx context.Context) (sls.Version, error)
}

// slsSync keeps reds' copy of SLS (switches, Mountain chassis) in step with
// SLS: its /version counter is read every SLSWatch, and also when a MAC is
// about to fail for want of something SLS provides (a switch, a connector):
// a BMC leased moments after the layout was written to SLS, before the
// next watch, then succeeds on its first attempt instead of a retry 5 s
// later (1,000 BMCs leased at once cost 1,822 attempts). The data are read
// again only when the counter moved. Checks are coalesced: one is in flight
// at a time; a MAC joins the one under way if it started after the MAC's
// lookup began (so it sees any write the lookup missed), else waits for
// the next, which every MAC arriving meanwhile shares.
type slsSync struct {
	sls slsVersioner // nil: SLS has no /version, re-checks read nothing

	mu      sync.Mutex
	version int64     // the counter when the data were last read; -1 unknown
	gen     uint64    // data reads so far (each may have changed the data)
	started uint64    // checks started so far
	cur     *slsCheck // the check in flight, if any
}

// slsCheck is one /version read (and data read if it moved) in flight.
type slsCheck struct {
	seq  uint64
	done chan struct{}
}

// slsMark is where a lookup stands: the checks started and the data reads
// done before it began.
type slsMark struct{ seq, gen uint64 }

func newSLSSync(lay Layout) *slsSync {
	v, _ := lay.(slsVersioner)
	return &slsSync{sls: v, version: -1}
}

// mark returns where a lookup beginning now stands.
func (y *slsSync) mark() slsMark {
	y.mu.Lock()
	defer y.mu.Unlock()
	return slsMark{seq: y.started, gen: y.gen}
}

// readSince reports whether the data were read again since m.
func (y *slsSync) readSince(m slsMark) bool {
	y.mu.Lock()
	defer y.mu.Unlock()
	return y.gen != m.gen
}

// readSLS reads the switches and chassis from SLS, whatever its counter
// says (at start, and every SLSRefresh), the version first: the data are
// then at least as new as the counter kept.
func (s *Service) readSLS(ctx context.Context) {
	y := s.sync
	version := int64(-1) // unknown: the next check reads the data again
	if y.sls != nil {
		if v, err := y.sls.Version(ctx); err != nil {
			s.pollFailed(ctx, "sls-version", err)
		} else {
			version = v.Counter
		}
	}
	ok := s.refreshSLS(ctx)
	y.mu.Lock()
	defer y.mu.Unlock()
	y.gen++
	if ok {
		y.version = version
	}
}

// slsChanged makes sure SLS's /version was read after m (by a check of its
// own, or one it joins) and reports whether reds' copy of SLS was read
// again since m: a lookup that began at m and failed for want of a switch
// or connector is then worth one more try.
func (s *Service) slsChanged(ctx context.Context, m slsMark) bool {
	y := s.sync
	if y.sls == nil {
		return false
	}
	for {
		y.mu.Lock()
		c := y.cur
		if c == nil {
			y.started++
			c = &slsCheck{seq: y.started, done: make(chan struct{})}
			y.cur = c
			y.mu.Unlock()
			s.checkSLS(ctx)
			y.mu.Lock()
			y.cur = nil
			close(c.done)
			y.mu.Unlock()
			return y.readSince(m)
		}
		y.mu.Unlock()
		select {
		case <-c.done:
		case <-ctx.Done():
			return false
		}
		if c.seq > m.seq { // started after the lookup: it answers
			return y.readSince(m)
		}
	}
}

// checkSLS reads SLS's /version and, when the counter moved, the switches
// and chassis; the MACs left unknown for want of a switch or connector are
// then retried at once. Only slsChanged calls it (one at a time).
func (s *Service) checkSLS(ctx context.Context) {
	y := s.sync
	v, err := y.sls.Version(ctx)
	if err != nil {
		s.pollFailed(ctx, "sls-version", err)
		return
	}
	y.mu.Lock()
	same := v.Counter == y.version
	y.mu.Unlock()
	if same {
		return
	}
	ok := s.refreshSLS(ctx)
	y.mu.Lock()
	y.gen++
	if ok {
		y.version = v.Counter
	}
	y.mu.Unlock()
	s.retrySLSDependent()
}

// watchSLS is the periodic check (every SLSWatch): a switch added to SLS
// is walked within seconds, not at the next SLSRefresh.
func (s *Service) watchSLS(ctx context.Context) {
	s.slsChanged(ctx, slsMark{})
}

// wantsSLS reports whether err is a failure for want of something SLS
// provides: no switch, the MAC on none of them, or no connector there.
func wantsSLS(err error) bool {
	var le *locateError
	return asLocate(err, &le) && (le.reason == ReasonNotOnSwitch || le.reason == ReasonNoConnector)
}
