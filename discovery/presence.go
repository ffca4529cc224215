package discovery

import (
	"context"
	"errors"
	"sync"

	"github.com/hmsuite/hms/internal/problem"
)

// presenceConcurrency bounds the BMCs checked at once.
const presenceConcurrency = 32

// checkPresence checks every registered (or missing) BMC's service root. A
// BMC that answers again is registered again; one that does not is retired
// when SLS no longer has its xname (RedfishEndpoint disabled, it and its
// components Empty in HSM), else flagged Alert in HSM and kept.
func (s *Service) checkPresence(ctx context.Context) {
	var eps []Endpoint
	for _, st := range []string{StateRegistered, StateMissing} {
		l, err := s.cfg.Store.List(ctx, st)
		if err != nil {
			s.pollFailed(ctx, "store", err)
			return
		}
		eps = append(eps, l...)
	}
	sem := make(chan struct{}, presenceConcurrency)
	var wg sync.WaitGroup
	for _, e := range eps {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			s.checkOne(ctx, e)
		}()
	}
	wg.Wait()
}

func (s *Service) checkOne(ctx context.Context, e Endpoint) {
	if err := s.cfg.BMCs.Present(ctx, e.Addr); err == nil {
		if e.State == StateMissing {
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
	_, err := s.cfg.SLS.GetHardware(ctx, e.Xname)
	switch {
	case errors.Is(err, problem.ErrNotFound):
		if err := retire(ctx, s.cfg.HSM, e.Xname); err != nil {
			s.pollFailed(ctx, "hsm", err)
			return
		}
		s.setState(ctx, e, StateRemoved)
		s.m.removed.Inc()
		s.log.Info("bmc_removed", "xname", e.Xname, "mac", e.MAC)
	case err != nil:
		s.pollFailed(ctx, "sls", err)
	case e.State != StateMissing:
		if err := s.cfg.HSM.BulkFlagOnly(ctx, []string{e.Xname}, "Alert"); err != nil {
			s.pollFailed(ctx, "hsm", err)
			return
		}
		s.setState(ctx, e, StateMissing)
		s.m.missing.Inc()
		s.log.Warn("bmc_missing", "xname", e.Xname, "addr", e.Addr)
	}
}

func (s *Service) setState(ctx context.Context, e Endpoint, state string) {
	if err := s.cfg.Store.SetState(ctx, e.Xname, state); err != nil {
		s.pollFailed(ctx, "store", err)
	}
}

// CheckPresence runs one presence round now (tests, and the operator's
// POST /v1/presence).
func (s *Service) CheckPresence(ctx context.Context) { s.checkPresence(ctx) }
