package discovery

import (
	"context"
	"errors"
	"sort"
)

// finish records the outcome of j: done, or unknown with a retry time. The
// backoff doubles with each failed attempt of the MAC (RetryMin to
// RetryMax). A MAC on no switch is deferred during UnplacedGrace: not
// counted as a failure, not logged, not listed (see owners.go).
func (s *Service) finish(j job, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.running, j.mac)
	if s.again[j.mac] {
		delete(s.again, j.mac)
		s.queue = append(s.queue, j.mac)
		s.signal()
		return
	}
	if err == nil {
		s.done[j.mac] = j.ip
		delete(s.jobs, j.mac)
		delete(s.unknown, j.mac)
		delete(s.logged, j.mac)
		return
	}
	cur := s.jobs[j.mac]
	cur.attempts++
	if cur.first.IsZero() {
		cur.first = j.since
	}
	s.jobs[j.mac] = cur
	now := s.cfg.Now()
	u := &Unknown{MACAddress: j.mac, IPAddress: j.ip, Xname: j.xname, Attempts: cur.attempts, LastAttempt: now.UTC()}
	s.unknown[j.mac] = u
	u.Reason, u.Detail, u.Switch, u.Port = describe(err)
	backoff := min(s.cfg.RetryMin<<min(u.Attempts-1, 16), s.cfg.RetryMax)
	u.NextAttempt = u.LastAttempt.Add(backoff)
	var le *locateError
	if errors.As(err, &le) && le.onNoSwitch && now.Sub(cur.first) < s.cfg.UnplacedGrace {
		u.Deferred = true
		return
	}
	s.m.failures.WithLabelValues(u.Reason).Inc()
	if s.logged[j.mac] != u.Reason {
		// Logged once per cause; the count is in reds_failures_total.
		s.logged[j.mac] = u.Reason
		s.log.Warn("mac_not_registered", "mac", j.mac, "ip", j.ip, "reason", u.Reason, "detail", u.Detail)
	}
}

// describe splits err into the fields of Unknown.
func describe(err error) (reason, detail, sw, port string) {
	var le *locateError
	if asLocate(err, &le) {
		return le.reason, le.detail, le.sw, le.port
	}
	return reasonOf(err), err.Error(), "", ""
}

// retryTick drops the MACs on no switch HSM now names (a node's NIC, from
// its BMC's walk) and requeues the unknown MACs whose retry time has come;
// Run calls it every RetryMin.
func (s *Service) retryTick(ctx context.Context) {
	s.dropPlaced(ctx)
	s.requeueDue()
}

// requeueDue queues the unknown MACs whose retry time has come.
func (s *Service) requeueDue() {
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for mac, u := range s.unknown {
		if !now.Before(u.NextAttempt) && !s.running[mac] {
			j := s.jobs[mac]
			j.since, j.prev = now, u.LastAttempt
			s.jobs[mac] = j
			delete(s.unknown, mac)
			s.queue = append(s.queue, mac)
			s.signal()
		}
	}
}

// Unknowns returns the MACs not placed yet, by MAC, apart from those
// deferred (on no switch, within their grace).
func (s *Service) Unknowns() []Unknown { return s.unknowns(false) }

// unknowns returns the MACs not placed yet, by MAC, the deferred ones too
// if deferred is set.
func (s *Service) unknowns(deferred bool) []Unknown {
	s.mu.Lock()
	out := make([]Unknown, 0, len(s.unknown))
	for _, u := range s.unknown {
		if deferred || !u.Deferred {
			out = append(out, *u)
		}
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].MACAddress < out[j].MACAddress })
	return out
}

// unknownCount counts the unknown MACs that are deferred, or those that
// are not.
func (s *Service) unknownCount(deferred bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, u := range s.unknown {
		if u.Deferred == deferred {
			n++
		}
	}
	return n
}
