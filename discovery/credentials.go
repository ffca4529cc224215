package discovery

import (
	"context"
	"errors"
	"fmt"
	"net/http"

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
// credentials and re-point HSM at it.

// Notice acts on one lease event (the bus handler calls it; so can a
// DHCP server in the same process), and keeps which MACs hold a lease.
func (s *Service) Notice(ev lease.Event) {
	s.noteLease(ev)
	s.place(ev)
}

// noteLease records a MAC unknown to HSM that was handed an address, and
// forgets it when its lease ends. A renewal sends no event (lease.Commit),
// so a commit's Expires is not the lease's end: the expire, release or
// decline event is.
func (s *Service) noteLease(ev lease.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case ev.Kind == lease.Commit && ev.IPAddress != "" && !ev.Known:
		s.leases[ev.MACAddress] = ev.IPAddress
	case ev.Kind == lease.Release || ev.Kind == lease.Expire || ev.Kind == lease.Decline:
		delete(s.leases, ev.MACAddress)
	}
}

// leaseOf returns the address of the lease reds was told mac holds (""
// if none; in memory: after a restart of reds, from the next lease event
// of the MAC on).
func (s *Service) leaseOf(mac string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leases[mac]
}

// errTokenRefused marks a MAC the discovery token may not obtain
// credentials for or place (403, its detail says why).
var errTokenRefused = errors.New("refused to the discovery token")

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
