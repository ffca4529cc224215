package discovery

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/ipxe/lease"
)

// The discovery token is on the kernel command line of every node booted
// into the discovery image, so anyone on the boot network may hold it. With
// it alone, POST /v1/credentials issues a password only for a MAC that has
// a lease reds was told of (the BMC of a node being added got one moments
// before) and that reds has not registered: a registered BMC's
// credentials are not re-issued to whoever holds the token. Admin tokens
// keep full access; node tokens their own BMC's MACs (ownMACs). PUT
// /v1/discovery with the token alone places only such a MAC, and only at
// the address of that lease: else a registered BMC's MAC named with
// another address would have the pipeline log in there with the BMC's
// credentials and re-point HSM at it. A node token is on the node's
// kernel command line, which any local user may read, so it places its BMC
// only at the address reds has for it or at its lease's (nodeMayPlace).
// And whoever the caller, the pipeline never logs in with stored
// credentials at an address a caller named unless reds has the BMC there
// already (claim, provision).
// Naming a registered BMC's MAC at the very address it is registered at
// with the discovery token is the image repeating a registration done:
// 200, nothing placed, nothing changed (toPlace).

// Notice acts on one lease event (a DHCP server in the same process may
// call it; the bus handler notes a batch at once), and keeps which MACs
// hold a lease.
func (s *Service) Notice(ctx context.Context, ev lease.Event) {
	changes, _ := s.noteLeases([]lease.Event{ev})
	if err := s.saveLeases(ctx, changes); err != nil {
		// No one to hand the event again: the lease is known until reds
		// restarts.
		s.log.Error("lease_store_failed", "leases", len(changes), "err", err)
	}
	s.place(ev)
}

// noteLeases notes each of evs (noteLease) and returns the changes to keep
// and how to undo them: each MAC's lease before (nil: none).
func (s *Service) noteLeases(evs []lease.Event) ([]leaseChange, map[string]*heldLease) {
	var changes []leaseChange
	undo := map[string]*heldLease{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range evs {
		if _, seen := undo[ev.MACAddress]; !seen {
			var before *heldLease
			if l, ok := s.leases[ev.MACAddress]; ok {
				before = &l
			}
			undo[ev.MACAddress] = before
		}
		if c, ok := s.noteLeaseLocked(ev); ok {
			changes = append(changes, c)
		}
	}
	return changes, undo
}

// undoLeases puts back the leases noteLeases changed, as undo has them.
func (s *Service) undoLeases(undo map[string]*heldLease) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for mac, l := range undo {
		if l == nil {
			delete(s.leases, mac)
		} else {
			s.leases[mac] = *l
		}
	}
}

// noteLease records a MAC unknown to HSM that was handed an address, and
// forgets it when its lease ends or a commit says HSM knows it (a BMC HSM
// learnt of another way is not the discovery token's to act for); it
// returns the change to keep, if any. A renewal's commit (bss sends one
// at most once per half lease, lease.Commit) moves the lease's end. A
// commit's Expires is not surely the lease's end (a DHCP server may
// publish no renewal): the expire, release or decline event is, and,
// should reds miss that, the sweep LeaseGrace after Expires (sweepLeases).
func (s *Service) noteLease(ev lease.Event) (leaseChange, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.noteLeaseLocked(ev)
}

// noteLeaseLocked is noteLease with s.mu held.
func (s *Service) noteLeaseLocked(ev lease.Event) (leaseChange, bool) {
	held, ok := s.leases[ev.MACAddress]
	switch {
	case ev.Kind == lease.Commit && ev.IPAddress != "" && !ev.Known:
		l := heldLease{ip: ev.IPAddress, expires: s.leaseEnd(ev)}
		if ok && l == held {
			return leaseChange{}, false
		}
		s.leases[ev.MACAddress] = l
		return leaseChange{MAC: ev.MACAddress, IP: l.ip, Expires: l.expires}, true
	case ok && (ev.Kind == lease.Commit && ev.Known || ev.Kind == lease.Release || ev.Kind == lease.Expire || ev.Kind == lease.Decline):
		delete(s.leases, ev.MACAddress)
		return leaseChange{MAC: ev.MACAddress}, true
	}
	return leaseChange{}, false
}

// leaseEnd is when the lease ev committed ends, to the second (as kept):
// its Expires, else (an event that gives none) its time, else now.
func (s *Service) leaseEnd(ev lease.Event) time.Time {
	t := ev.Expires
	if t.IsZero() {
		t = ev.Time
	}
	if t.IsZero() {
		t = s.cfg.Now()
	}
	return time.Unix(t.Unix(), 0)
}

// saveLeases keeps changes in the store, so a restarted reds knows the
// leases that still stand (no event may come for them again before they
// end).
func (s *Service) saveLeases(ctx context.Context, changes []leaseChange) error {
	if s.cfg.Store == nil { // a Service tested without a database
		return nil
	}
	return s.cfg.Store.PutLeases(ctx, changes)
}

// loadLeases reads the leases kept by an earlier run.
func (s *Service) loadLeases(ctx context.Context) error {
	m, err := s.cfg.Store.Leases(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for mac, l := range m {
		s.leases[mac] = l
	}
	return nil
}

// leaseOf returns the address of the lease reds was told mac holds (""
// if none, or if it ended LeaseGrace ago: its expire event was missed).
func (s *Service) leaseOf(mac string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.leases[mac]
	if !ok || s.swept(l, s.cfg.Now()) {
		return ""
	}
	return l.ip
}

// swept reports whether l is over at now: it ended LeaseGrace ago and no
// event said otherwise.
func (s *Service) swept(l heldLease, now time.Time) bool {
	return !now.Before(l.expires.Add(s.cfg.LeaseGrace))
}

// sweepLeases forgets the leases that ended LeaseGrace ago, in memory and
// in the store: reds missed their expire event (it was down, or the event
// was lost), and the discovery token must not act for them forever. Run
// calls it every leaseSweep.
func (s *Service) sweepLeases(ctx context.Context) {
	now := s.cfg.Now()
	s.mu.Lock()
	n := 0
	for mac, l := range s.leases {
		if s.swept(l, now) {
			delete(s.leases, mac)
			n++
		}
	}
	s.mu.Unlock()
	if s.cfg.Store != nil {
		// By the time kept: rows of leases renewed since (a new commit,
		// later end) stay.
		if _, err := s.cfg.Store.SweepLeases(ctx, now.Add(-s.cfg.LeaseGrace)); err != nil {
			s.pollFailed(ctx, "store", err)
			return
		}
	}
	if n > 0 {
		s.m.leasesSwept.Add(float64(n))
		s.log.Info("leases_swept", "leases", n)
	}
}

// leaseSweep is how often ended leases are swept.
const leaseSweep = time.Minute

// errTokenRefused marks a MAC the discovery token (or a node token) may
// not obtain credentials for or place (403, its detail says why).
var errTokenRefused = errors.New("refused to this token")

// tokenMayIssue checks that the discovery token may obtain credentials for
// mac: it holds a current lease and reds has not registered its BMC.
func (a *API) tokenMayIssue(ctx context.Context, mac string) error {
	if a.svc.leaseOf(mac) == "" {
		return fmt.Errorf("%w: the discovery token acts only for a MAC holding a DHCP lease reds has seen; %s holds none (an admin token may)",
			errTokenRefused, mac)
	}
	ep, err := a.store.ByMAC(ctx, mac)
	switch {
	case errors.Is(err, problem.ErrNotFound):
		return nil
	case err != nil:
		return err
	case ep.State == StateRegistered || ep.State == StateMissing:
		return fmt.Errorf("%w: %s is the MAC of %s, registered already: the discovery token neither obtains its credentials nor places it (an admin token may)",
			errTokenRefused, mac, ep.Xname)
	}
	return nil
}

// tokenMayPlace checks that the discovery token may place mac at ip (PUT
// /v1/discovery): as tokenMayIssue, and ip is the address of its lease.
func (a *API) tokenMayPlace(ctx context.Context, mac, ip string) error {
	if err := a.tokenMayIssue(ctx, mac); err != nil {
		return err
	}
	if held := a.svc.leaseOf(mac); held != ip {
		return fmt.Errorf("%w: the discovery token places a MAC only at the address of its DHCP lease: %s holds %s, not %s (an admin token may)",
			errTokenRefused, mac, held, ip)
	}
	return nil
}

// mayPlace checks that the caller of r may place mac at ip (PUT
// /v1/discovery): an admin anywhere; a node token (its own BMC's MAC,
// ownMACs checked) as nodeMayPlace; the discovery token as tokenMayPlace.
func (a *API) mayPlace(r *http.Request, mac, ip string) error {
	p, ok := auth.FromContext(r.Context())
	switch {
	case ok && p.Has(auth.Admin):
		return nil
	case ok && p.Has(auth.Node):
		return a.nodeMayPlace(r.Context(), mac, ip)
	}
	return a.tokenMayPlace(r.Context(), mac, ip)
}

// nodeMayPlace checks that a node token may place its own BMC's mac at
// ip: only at the address reds has for that BMC or at the address of the
// lease reds saw for mac. The token is readable by any user of the node
// (/proc/cmdline): any other address would have the pipeline log in there
// with the BMC's password and re-point HSM at it.
func (a *API) nodeMayPlace(ctx context.Context, mac, ip string) error {
	ep, err := a.store.ByMAC(ctx, mac)
	if err != nil {
		return err
	}
	if ip == ep.IP || ip == a.svc.leaseOf(mac) {
		return nil
	}
	return fmt.Errorf("%w: a node token places its BMC %s only at the address reds has for it (%s) or at that of its DHCP lease, not at %s",
		errTokenRefused, ep.Xname, ep.IP, ip)
}

// toPlace returns the events of evs the caller of r is to place: with the
// discovery token, none of a registered BMC at the address it is
// registered at (the image repeating a registration done: nothing to do);
// every other one only if the caller may place it (mayPlace), else the
// refusal.
func (a *API) toPlace(r *http.Request, evs []lease.Event) ([]lease.Event, error) {
	out := evs[:0:0]
	for _, ev := range evs {
		if viaToken(r) {
			done, err := a.registeredAt(r.Context(), ev.MACAddress, ev.IPAddress)
			if err != nil {
				return nil, err
			}
			if done {
				continue
			}
		}
		if err := a.mayPlace(r, ev.MACAddress, ev.IPAddress); err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// registeredAt reports whether reds registered the BMC of mac at ip (state
// registered, or missing since): placing it there again changes nothing.
func (a *API) registeredAt(ctx context.Context, mac, ip string) (bool, error) {
	ep, err := a.store.ByMAC(ctx, mac)
	switch {
	case errors.Is(err, problem.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	return (ep.State == StateRegistered || ep.State == StateMissing) && ep.IP == ip, nil
}

// viaToken reports whether r came in with the discovery token, not with
// an admin's or a node's JWT (authorized let it through one way or the
// other).
func viaToken(r *http.Request) bool {
	p, ok := auth.FromContext(r.Context())
	return !ok || !p.Has(auth.Admin) && !p.Has(auth.Node)
}

// postCredentials gives the node the credentials to set on its BMC in-band:
// the factory user with a new password, kept (sealed) for the MAC so the
// pipeline logs in with it when it places the BMC.
func (a *API) postCredentials(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readAddresses(w, r)
	if !ok {
		return
	}
	mac := lease.NormalizeMAC(macColons(body.Addresses[0].MACAddress))
	if viaToken(r) {
		if err := a.tokenMayIssue(r.Context(), mac); errors.Is(err, errTokenRefused) {
			problem.WriteStatus(w, r, http.StatusForbidden, err.Error())
			return
		} else if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
	}
	pw, err := a.svc.cfg.BMCs.GeneratePassword()
	if err == nil {
		err = a.store.PutNodeCreds(r.Context(), mac, pw)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, map[string]string{"username": a.svc.cfg.BMCs.cfg.DefaultUser, "password": pw})
}
