package discovery

import (
	"context"
	"errors"
	"sync"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/layout/sls"
)

// presenceConcurrency bounds the BMCs checked at once.
const presenceConcurrency = 32

// checkPresence checks the service root of every BMC discovery registered,
// found missing, or left pending (its credentials set, HSM not told yet:
// HSM was unreachable, or reds stopped). A BMC that answers again is
// registered again, and so is one HSM lost (restore.go); one that does not
// is retired when SLS no longer has its xname (RedfishEndpoint disabled,
// it and its components Empty in HSM), else flagged Alert in HSM and kept.
func (s *Service) checkPresence(ctx context.Context) {
	var eps []Endpoint
	for _, st := range []string{StateRegistered, StateMissing, StatePending} {
		l, err := s.cfg.Store.List(ctx, st)
		if err != nil {
			s.pollFailed(ctx, "store", err)
			return
		}
		eps = append(eps, l...)
	}
	// Read after the store: an endpoint registered in between is in HSM's
	// list, not taken for lost.
	lost := s.lostInHSM(ctx, eps)
	sem := make(chan struct{}, presenceConcurrency)
	var wg sync.WaitGroup
	for _, e := range eps {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			s.checkOne(ctx, e, lost[e.Xname])
		}()
	}
	wg.Wait()
}

// checkOne checks one BMC; lost is set when HSM has lost its endpoint
// (lostInHSM): there is no component to flag then, and an answering BMC
// is registered again.
func (s *Service) checkOne(ctx context.Context, e Endpoint, lost bool) {
	if key, err := s.cfg.BMCs.Present(ctx, e.Addr); err == nil {
		s.pinAtPresence(ctx, e, key)
		switch {
		case lost:
			if s.restore(ctx, e, key) && e.State == StateMissing {
				// Its component, if HSM kept it, loses its Alert; if not,
				// HSM's walk makes it anew.
				_ = s.cfg.HSM.BulkFlagOnly(ctx, []string{e.Xname}, "OK")
				s.setState(ctx, e, StateRegistered)
				s.log.Info("bmc_back", "xname", e.Xname)
			}
		case e.State == StatePending:
			// Its registration goes on (a no-op if it is queued or
			// waiting for its retry already).
			s.resume(e)
		case e.State == StateMissing:
			if err := s.cfg.HSM.BulkFlagOnly(ctx, []string{e.Xname}, "OK"); err != nil {
				s.pollFailed(ctx, "hsm", err)
				return
			}
			s.setState(ctx, e, StateRegistered)
			s.log.Info("bmc_back", "xname", e.Xname)
		}
		return
	}
	if ctx.Err() != nil {
		return
	}
	in, err := s.inSLS(ctx, e.Xname)
	switch {
	case err != nil:
		s.pollFailed(ctx, "sls", err)
	case !in:
		// A pending BMC is retired too: HSM may hold its endpoint (the
		// POST committed, its answer lost when HSM went down).
		s.startRemoval(ctx, e)
	case e.State == StateRegistered:
		// A BMC HSM lost has no component to flag: it is restored when it
		// answers again.
		if err := s.cfg.HSM.BulkFlagOnly(ctx, []string{e.Xname}, "Alert"); err != nil && !lost {
			s.pollFailed(ctx, "hsm", err)
			return
		}
		s.setState(ctx, e, StateMissing)
		s.m.missing.Inc()
		s.log.Warn("bmc_missing", "xname", e.Xname, "addr", e.Addr)
	}
	// A pending BMC still in SLS stays pending: its registration's retries
	// say why in /v1/unknown.
}

// inSLS reports whether SLS still has the BMC x: its own object, or one
// below it (its node). A site's SLS may hold no object for a BMC, only its
// nodes and the connector naming it (the BMC object is optional): such a
// BMC missing one presence check must not be taken for removed.
func (s *Service) inSLS(ctx context.Context, x string) (bool, error) {
	_, err := s.cfg.SLS.GetHardware(ctx, x)
	if err == nil || !errors.Is(err, problem.ErrNotFound) {
		return err == nil, err
	}
	below, err := s.cfg.SLS.SearchHardware(ctx, sls.HardwareSearch{Parent: x})
	if err != nil {
		return false, err
	}
	return len(below) > 0, nil
}

func (s *Service) setState(ctx context.Context, e Endpoint, state string) {
	if err := s.cfg.Store.SetState(ctx, e.Xname, state); err != nil {
		s.pollFailed(ctx, "store", err)
	}
}

// CheckPresence runs one presence round now (tests, and the operator's
// POST /v1/presence).
func (s *Service) CheckPresence(ctx context.Context) { s.checkPresence(ctx) }

// resume queues the registration of e, a BMC left pending (its xname and
// credentials known), unless its MAC is queued or waiting already. A
// Mountain BMC's address is checked against its cabinet's HMN when the
// attempt runs (cabinetNetwork), not here: SLS may not be read yet. A
// reds without the Mountain role leaves Mountain BMCs alone.
func (s *Service) resume(e Endpoint) {
	if e.Kind == KindMountain && !s.cfg.Mountain {
		return
	}
	s.submit(job{mac: e.MAC, ip: e.IP, since: s.cfg.Now(), xname: e.Xname, kind: e.Kind, resume: true})
}

// resumePending queues every endpoint left pending by an earlier run: HSM
// was not told of it, and no lease event may come for it again soon (a
// lease renewal, or none at all when DHCP already names its MAC).
func (s *Service) resumePending(ctx context.Context) {
	eps, err := s.cfg.Store.List(ctx, StatePending)
	if err != nil {
		s.pollFailed(ctx, "store", err)
		return
	}
	for _, e := range eps {
		if e.MAC != "" && e.IP != "" {
			s.resume(e)
		}
	}
}
