package discovery

import (
	"context"
	"fmt"
)

// Endpoints HSM lost. HSM may lose a RedfishEndpoint reds registered (an
// admin deleted it, or HSM was restarted on an empty database) while the
// BMC keeps its address: no lease event comes for it then (its lease is
// only renewed), so nothing else would register it again. Each presence
// round lists HSM's endpoints once (one GET, however many BMCs) and
// registers again every BMC reds holds as registered (or missing) that
// the list lacks, when the BMC answers and SLS still has it; a BMC that
// does not answer is restored when it answers again.

// lostInHSM returns the xnames of eps that reds registered (registered or
// missing) and HSM's RedfishEndpoint list lacks, read in one request;
// nil when HSM did not answer (counted and logged as a failed poll).
func (s *Service) lostInHSM(ctx context.Context, eps []Endpoint) map[string]bool {
	list, err := s.cfg.HSM.RedfishEndpoints(ctx, nil)
	if err != nil {
		s.pollFailed(ctx, "hsm", fmt.Errorf("hsm: list RedfishEndpoints: %w", err))
		return nil
	}
	in := make(map[string]bool, len(list))
	for _, ep := range list {
		in[ep.ID] = true
	}
	lost := map[string]bool{}
	for _, e := range eps {
		if (e.State == StateRegistered || e.State == StateMissing) && !in[e.Xname] {
			lost[e.Xname] = true
		}
	}
	return lost
}

// restore registers e again in HSM, which lost its RedfishEndpoint
// (lostInHSM), from the endpoint as stored now (its address, MAC and
// password): its Ethernet interface is pointed at it again and the
// endpoint POSTed, so HSM walks it. A MAC a worker holds is left to it
// (its registration answers), and so is an endpoint stored otherwise
// since the round began; a BMC gone from SLS (the operator removed it)
// is not restored, nor is one whose address presented key, another TLS
// key than the one pinned (pin.go): HSM would log in there with the
// stored password, which the pin keeps from a device spoofing the BMC. It
// reports whether HSM has the endpoint again.
func (s *Service) restore(ctx context.Context, e Endpoint, key string) bool {
	s.mu.Lock()
	_, busy := s.jobs[e.MAC]
	s.mu.Unlock()
	if busy {
		return false
	}
	cur, err := s.cfg.Store.Get(ctx, e.Xname)
	if err != nil {
		s.pollFailed(ctx, "store", err)
		return false
	}
	if cur.State != e.State || cur.IP != e.IP {
		return false
	}
	if cur.Key != "" && key != cur.Key {
		s.keyRefused(cur.Xname, fmt.Errorf("bmc %s presents TLS key sha256:%s, not sha256:%s: %w; not registered again in HSM (DELETE /v1/endpoints/{xname}/tls-key if the BMC's key really changed)",
			cur.Addr, key, cur.Key, errKeyChanged))
		s.m.restored.WithLabelValues("error").Inc()
		return false
	}
	in, err := s.inSLS(ctx, e.Xname)
	if err != nil || !in {
		if err != nil {
			s.pollFailed(ctx, "sls", err)
		}
		return false
	}
	err = pointInterface(ctx, s.cfg.HSM, cur.MAC, cur.IP, cur.Xname)
	if err == nil {
		err = s.reg.register(ctx, cur)
	}
	cause := ""
	if err != nil {
		cause = err.Error()
	}
	first := s.newCause("restore "+e.Xname, cause)
	if err != nil {
		s.m.restored.WithLabelValues("error").Inc()
		if first && ctx.Err() == nil {
			s.log.Warn("endpoint_restore_failed", "xname", e.Xname, "err", err)
		}
		return false
	}
	s.m.restored.WithLabelValues("ok").Inc()
	s.log.Warn("endpoint_restored_in_hsm", "xname", e.Xname, "addr", cur.Addr, "mac", cur.MAC)
	return true
}
