package discovery

import (
	"context"
	"errors"
	"net"
	"net/url"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/ipxe/lease"
)

// refreshSLS re-reads the switches (River) and the Mountain chassis and
// reports whether both reads succeeded (slssync.go decides when).
func (s *Service) refreshSLS(ctx context.Context) bool {
	ok := true
	if s.cfg.River {
		sws, err := Switches(ctx, s.cfg.SLS, s.cfg.Switch)
		if err != nil {
			s.pollFailed(ctx, "sls", err)
			ok = false
		} else {
			s.m.polls.WithLabelValues("sls", "ok").Inc()
			s.loc.SetSwitches(sws)
		}
	}
	if s.cfg.Mountain {
		if err := s.refreshMountain(ctx); err != nil {
			s.pollFailed(ctx, "sls", err)
			ok = false
		}
	}
	return ok
}

// retrySLSDependent brings forward the retry of MACs left unknown for want
// of something SLS provides (a switch, a connector) or because SLS did not
// answer (a Mountain BMC resumed before its chassis were read): SLS just
// changed.
func (s *Service) retrySLSDependent() {
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.unknown {
		if u.Reason == ReasonNotOnSwitch || u.Reason == ReasonNoConnector || u.Reason == ReasonSLS {
			u.NextAttempt = now
		}
	}
}

// pollFailed counts a failed poll and logs it once per cause.
func (s *Service) pollFailed(ctx context.Context, target string, err error) {
	if ctx.Err() != nil {
		return
	}
	s.m.polls.WithLabelValues(target, "error").Inc()
	if s.newCause("poll "+target, err.Error()) {
		s.log.Warn("poll_failed", "target", target, "err", err)
	}
}

// newCause records cause ("" none) as the latest of key and reports whether
// it differs from the one before: what is logged once per cause.
func (s *Service) newCause(key, cause string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	first := s.logged[key] != cause
	if cause == "" {
		delete(s.logged, key)
	} else {
		s.logged[key] = cause
	}
	return first
}

// refreshFDB is the slow periodic walk of every switch.
func (s *Service) refreshFDB(ctx context.Context) {
	s.fdb.Refresh(ctx, s.loc.Switches(), s.cfg.FDBRefresh/2)
}

// pollHSM queues the MACs HSM has without a ComponentID: interfaces a DHCP
// server other than ours wrote (CSM's Kea does).
func (s *Service) pollHSM(ctx context.Context) {
	// ComponentID= selects the unplaced ones in HSM: the poll does not read
	// every interface of a large system each time.
	eis, err := s.cfg.HSM.EthernetInterfaces(ctx, url.Values{"ComponentID": {""}})
	if err != nil {
		s.pollFailed(ctx, "hsm", err)
		return
	}
	s.m.polls.WithLabelValues("hsm", "ok").Inc()
	for _, ei := range eis {
		if ei.ComponentID != "" || len(ei.IPAddresses) == 0 {
			continue
		}
		ip := ei.IPAddresses[0].IPAddress
		if net.ParseIP(ip) == nil {
			continue
		}
		mac := lease.NormalizeMAC(ei.MACAddress)
		if prev, err := s.cfg.Store.ByMAC(ctx, mac); err == nil && prev.State == StateRegistered && prev.IP == ip {
			continue
		} else if err != nil && !errors.Is(err, problem.ErrNotFound) {
			return
		}
		s.submit(job{mac: mac, ip: ip, since: s.cfg.Now(), kind: KindRiver})
	}
}
