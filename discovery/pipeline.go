package discovery

import (
	"context"
	"errors"
	"fmt"

	"github.com/hmsuite/hms/internal/problem"
)

// process places j's MAC (River: switch port and SLS; Mountain: known),
// gives its BMC its own credentials and registers it in HSM; c times the
// stages.
func (s *Service) process(ctx context.Context, j job, c *clock) (string, error) {
	if prev, err := s.cfg.Store.ByMAC(ctx, j.mac); err == nil && prev.State == StateRegistered && prev.IP == j.ip {
		return prev.Xname, nil // a renewal of a BMC registered already
	}
	if j.resume {
		if e, err := s.cfg.Store.Get(ctx, j.xname); err != nil || e.State != StatePending {
			return "", err // registered, or being removed, since it was queued
		}
	}
	if j.xname != "" {
		return j.xname, s.configure(ctx, j.xname, j, c)
	}
	// A MAC HSM already gives to a node is not walked for. HSM not
	// answering does not stop the search (a BMC's registration then
	// fails at HSM, and says so).
	owner, err := s.ownerOf(ctx, j.mac)
	switch {
	case err != nil:
		s.pollFailed(ctx, "hsm", err)
	case owner != "":
		s.log.Info("mac_placed_by_hsm", "mac", j.mac, "component", owner)
		return owner, nil
	}
	m := s.sync.mark()
	loc, err := s.locate(ctx, j, c)
	if err != nil && wantsSLS(err) && s.slsChanged(ctx, m) {
		// SLS moved since the lookup began (the BMC was leased before reds
		// read its switch, connector or chassis): one more try, now.
		if mj, ok := s.mountainJob(j); ok {
			return mj.xname, s.configure(ctx, mj.xname, mj, c)
		}
		loc, err = s.locate(ctx, j, c)
	}
	if err != nil {
		return "", err
	}
	return loc.Xname, s.configure(ctx, loc.Xname, j, c)
}

// locate finds j's MAC on the switches, then the BMC SLS cables to its port.
func (s *Service) locate(ctx context.Context, j job, c *clock) (Location, error) {
	after := j.since
	if !j.prev.IsZero() {
		after = j.prev // a retry shares walks made since the attempt before
	}
	hits, err := s.loc.Ports(ctx, j.mac, after)
	c.lap(&c.t.Switch)
	if err != nil {
		return Location{}, err
	}
	loc, err := s.loc.Place(ctx, j.mac, hits)
	c.lap(&c.t.SLS)
	return loc, err
}

// mountainJob returns j as the Mountain job of its MAC when SLS's chassis
// now expect it (MEDS read them after the lease came).
func (s *Service) mountainJob(j job) (job, bool) {
	if !s.cfg.Mountain || j.xname != "" {
		return j, false
	}
	s.mu.Lock()
	mj, ok := s.mountain[j.mac]
	s.mu.Unlock()
	mj.ip, mj.since, mj.prev = j.ip, j.since, j.prev
	return mj, ok
}

// configure sets credentials (and, on Mountain BMCs, NTP and syslog) on
// the BMC of xname and registers it in HSM. Every request to the BMC goes
// out only on a connection presenting the TLS key pinned at its first
// registration, which this one pins if none was (pin.go).
func (s *Service) configure(ctx context.Context, x string, j job, c *clock) error {
	pin := &keyPin{}
	bmc := pin.pinned(ctx) // for the BMC's requests only, not HSM's
	e, nc, err := s.provision(bmc, x, j, pin)
	if err == nil && j.kind == KindMountain && (len(s.cfg.NTP) > 0 || s.cfg.Syslog != "") {
		if err = s.cfg.BMCs.SetNetworkProtocol(bmc, e.Addr, e.User, e.Password, s.cfg.NTP, s.cfg.Syslog); err != nil {
			err = stepErr(ReasonBMC, err)
		}
	}
	if kerr := pin.refused(e.Addr); kerr != nil {
		s.keyRefused(x, kerr)
		err = stepErr(ReasonBMC, kerr)
	}
	e.Key = pin.key()
	c.lap(&c.t.Credentials)
	if err != nil {
		return err
	}
	err = pointInterface(ctx, s.cfg.HSM, j.mac, j.ip, x)
	if err == nil {
		err = s.reg.register(ctx, e)
	}
	c.lap(&c.t.HSM)
	if err != nil {
		return stepErr(ReasonHSM, err)
	}
	// The node-side password is dropped with the registration when it is
	// the endpoint's password (the one that logged in), which every later
	// attempt logs in with (provision tries it before nc). When another one
	// logged in (reds set its own after a factory login), it is kept: the
	// node may still set it in-band, and the next attempt then needs it
	// (review-6).
	if nc.Password != e.Password {
		nc = NodeCred{}
	}
	if err := s.cfg.Store.Register(ctx, e, nc); err != nil {
		return err
	}
	s.m.registered.WithLabelValues(e.Kind).Inc()
	s.m.latency.Observe(s.cfg.Now().Sub(j.since).Seconds())
	s.log.Info("bmc_registered", "xname", x, "mac", j.mac, "ip", j.ip, "kind", e.Kind)
	return nil
}

// provision gives the BMC of xname at j's address credentials of its own.
// Passwords stored earlier (set but not registered before a crash, or set
// through the node-side flow) are tried first; otherwise the factory
// credentials log in, a new password is stored as pending, then set on the
// BMC and checked: the new one logs in, the factory one no longer does. It
// also returns the node-side password it read for j's MAC, which the
// registration drops (Store.Register).
func (s *Service) provision(ctx context.Context, xname string, j job, pin *keyPin) (Endpoint, NodeCred, error) {
	b := s.cfg.BMCs
	e := Endpoint{Xname: xname, Kind: j.kind, MAC: j.mac, IP: j.ip, Addr: b.Addr(j.ip),
		User: b.cfg.DefaultUser, State: StatePending}
	if e.Kind == "" {
		e.Kind = KindRiver
	}
	prev, err := s.cfg.Store.Get(ctx, xname)
	if err != nil && !errors.Is(err, problem.ErrNotFound) {
		return e, NodeCred{}, err
	}
	e.Key = prev.Key
	pin.expect(prev.Key)
	if err := s.mayLogIn(ctx, prev, j); err != nil {
		return e, NodeCred{}, err
	}
	if j.kind == KindMountain {
		if j.network, err = s.cabinetNetwork(j); err != nil {
			return e, NodeCred{}, err
		}
	}
	if err := inNetwork(j); err != nil {
		return e, NodeCred{}, err
	}
	node, err := s.cfg.Store.NodeCreds(ctx, j.mac)
	if err != nil {
		return e, NodeCred{}, err
	}
	e, err = s.credentials(ctx, e, prev, node.Password)
	return e, node, err
}

// credentials logs in to e's BMC with the first of prev's pending and
// registered passwords and the node-side password node that works, else
// sets a new password (provision).
func (s *Service) credentials(ctx context.Context, e, prev Endpoint, node string) (Endpoint, error) {
	b := s.cfg.BMCs
	for _, pw := range []string{prev.Pending, prev.Password, node} {
		if pw == "" {
			continue
		}
		switch err := b.Login(ctx, e.Addr, e.User, pw); {
		case err == nil:
			e.Password = pw
			return e, nil
		case !errors.Is(err, errRefused):
			return e, stepErr(ReasonBMCDown, err)
		}
	}
	pw, err := b.GeneratePassword()
	if err != nil {
		return e, err
	}
	e.Pending, e.Password = pw, prev.Password
	if err := s.cfg.Store.Put(ctx, e); err != nil {
		return e, err
	}
	if err := b.SetPassword(ctx, e.Addr, e.User, b.cfg.DefaultPassword, pw); err != nil {
		if errors.Is(err, errRefused) {
			return e, stepErr(ReasonBMC, err)
		}
		return e, stepErr(ReasonBMCDown, err)
	}
	if err := b.CheckChanged(ctx, e.Addr, e.User, b.cfg.DefaultPassword, pw); err != nil {
		return e, stepErr(ReasonBMC, err)
	}
	// Stored with the registration: until then the pending password is
	// what a restart would log in with.
	e.Password, e.Pending = pw, ""
	return e, nil
}

// keyRefused counts a BMC that presented another TLS key than the one
// pinned for xname, and logs it once per key presented.
func (s *Service) keyRefused(xname string, err error) {
	s.m.keyChanged.Inc()
	if s.newCause("tls key "+xname, err.Error()) {
		s.log.Warn("bmc_tls_key_changed", "xname", xname, "err", err)
	}
}

// mayLogIn refuses a claimed address (job.claimed) of a BMC that reds
// has at another one, prev by its xname or by its MAC: the pipeline would
// send it the BMC's stored passwords, or store the endpoint there as
// pending with them, and a retry would then send them. Defence in depth:
// the API lets no token but an admin's name such an address.
func (s *Service) mayLogIn(ctx context.Context, prev Endpoint, j job) error {
	if !j.claimed || s.leaseOf(j.mac) == j.ip {
		return nil // a DHCP server's or HSM's address
	}
	byMAC, err := s.cfg.Store.ByMAC(ctx, j.mac)
	if err != nil && !errors.Is(err, problem.ErrNotFound) {
		return err
	}
	for _, e := range []Endpoint{prev, byMAC} {
		if e.IP != "" && e.IP != j.ip {
			return stepErr(ReasonBMC, fmt.Errorf("%s is at %s: not logged in to at %s, an address a caller of PUT /v1/discovery named",
				e.Xname, e.IP, j.ip))
		}
	}
	return nil
}

// stepError is a failed step with the reason /v1/unknown shows.
type stepError struct {
	reason string
	err    error
}

func (e *stepError) Error() string { return e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

func stepErr(reason string, err error) error { return &stepError{reason: reason, err: err} }

// reasonOf is the /v1/unknown reason of an error that is not a locateError.
func reasonOf(err error) string {
	var se *stepError
	if errors.As(err, &se) {
		return se.reason
	}
	return "internal"
}

func asLocate(err error, le **locateError) bool { return errors.As(err, le) }
