package power

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// hsmCredsTTL is how long logins read from HSM are used before they are
// read again (PCS caches Vault's for 600 s); a BMC asked for and not known
// makes the next refresh come sooner, after hsmCredsRetry.
const (
	hsmCredsTTL   = 10 * time.Minute
	hsmCredsRetry = 10 * time.Second
)

// HSMCredentials are the BMC logins HSM keeps sealed, read through its
// service-only route GET /Inventory/RedfishEndpointCredentials (which
// needs an admin token: HSM answers 403 when it does not check tokens),
// as CSM's PCS reads Vault's secret/hms-creds. Override, the
// -bmc-credentials file, wins for the BMCs it names; its "default" serves
// the BMCs HSM has no login for.
type HSMCredentials struct {
	fetch    func(ctx context.Context) ([]hsm.BMCCredential, error)
	override StaticCredentials
	now      func() time.Time
	log      *slog.Logger

	mu      sync.Mutex
	by      map[string]Credential
	next    time.Time // when to read HSM again
	missing bool      // a BMC was asked for that HSM had no login for
	failing bool      // the last read failed (logged once per failure streak)
}

// NewHSMCredentials reads logins with fetch (statemgr/client's
// BMCCredentials); override, now (time.Now) and log may be nil.
func NewHSMCredentials(fetch func(ctx context.Context) ([]hsm.BMCCredential, error), override StaticCredentials,
	now func() time.Time, log *slog.Logger) *HSMCredentials {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &HSMCredentials{fetch: fetch, override: override, now: now, log: log, by: map[string]Credential{}}
}

// For returns bmc's login: the override's entry, else HSM's, else the
// override's default.
func (h *HSMCredentials) For(bmc string) (Credential, bool) {
	if c, ok := h.override[bmc]; ok {
		return c, true
	}
	h.mu.Lock()
	c, ok := h.by[bmc]
	if !ok {
		h.missing = true
	}
	h.mu.Unlock()
	if ok {
		return c, true
	}
	c, ok = h.override["default"]
	return c, ok
}

// refresh re-reads HSM's logins when they are older than hsmCredsTTL, or
// hsmCredsRetry after a BMC was missing or a read failed. A failed read
// keeps the logins held.
func (h *HSMCredentials) refresh(ctx context.Context) {
	h.mu.Lock()
	now := h.now()
	due := !now.Before(h.next) || (h.missing && !now.Before(h.next.Add(hsmCredsRetry-hsmCredsTTL)))
	if !due {
		h.mu.Unlock()
		return
	}
	h.next, h.missing = now.Add(hsmCredsTTL), false
	h.mu.Unlock()
	list, err := h.fetch(ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		h.next = now.Add(hsmCredsRetry)
		if !h.failing && ctx.Err() == nil {
			h.log.WarnContext(ctx, "bmc_credentials_unavailable", "source", "hsm", "err", err)
		}
		h.failing = true
		return
	}
	h.failing = false
	by := make(map[string]Credential, len(list))
	for _, c := range list {
		by[c.ID] = Credential{Username: c.User, Password: c.Password}
	}
	h.by = by
}

// forget drops the logins of bmcs (their address changed) and makes the
// next refresh read HSM at once.
func (h *HSMCredentials) forget(bmcs []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, b := range bmcs {
		delete(h.by, b)
	}
	h.next = h.now()
}

// credsRefresher is a Credentials that re-reads its source, and forgets
// the logins of BMCs that moved.
type credsRefresher interface {
	refresh(ctx context.Context)
	forget(bmcs []string)
}
