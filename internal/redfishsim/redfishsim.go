// Package redfishsim simulates Redfish BMCs so that discovery, inventory and
// power code (and third-party Redfish tools) can be tested without hardware.
//
// A BMC serves a Tree, either generated (Template, Generate: N systems with
// processors, memory and NICs whose MACs derive from the BMC's xname) or read
// from a DMTF short-form mockup directory (LoadMockup). It behaves like a BMC:
// Basic and session (X-Auth-Token) authentication, password changes through
// AccountService, ComputerSystem.Reset changing PowerState, PATCH kept in
// memory, ETags, Redfish error bodies. Faults (latency, hangs, 500s, garbage
// bodies, missing resources) can be injected per BMC, also while it runs.
//
// Trees are immutable and shared; each BMC keeps only what was changed, so a
// Fleet of thousands of BMCs fits in one process.
package redfishsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
)

// Default credentials of a BMC whose Config leaves them empty.
const (
	DefaultUser     = "root"
	DefaultPassword = "initial0"
)

// DefaultMaxSessions is the session limit of a BMC whose Config leaves it 0.
const DefaultMaxSessions = 64

// Config describes one simulated BMC.
type Config struct {
	// Xname names the BMC (e.g. "x3000c0s1b0"); a templated Tree takes its
	// MACs, UUIDs and serial numbers from it.
	Xname string
	// MACs, in a templated Tree, replace the MACs of the interfaces named
	// (keys as MAC takes them: "bmc:eth0", "s0:eth0"), e.g. a Mountain
	// BMC's, which derives from its place, not its xname's hash.
	MACs map[string]string
	// Tree is the resource tree to serve; it is never modified. Required.
	Tree *Tree
	// User and Password are the credentials that log in. If an account in the
	// tree has UserName User, it gets Password; otherwise the first account is
	// renamed to User. Empty means DefaultUser / DefaultPassword.
	User, Password string
	// Faults are the faults injected from the start; see SetFaults.
	Faults Faults
	// MaxSessions bounds the live sessions, as BMCs do; a login beyond it is
	// refused with 503 SessionLimitExceeded, which exposes clients that never
	// log out. Zero means DefaultMaxSessions.
	MaxSessions int
	// PasswordChangeRequired makes the login account behave as a factory
	// account does on real BMCs: the account shows PasswordChangeRequired
	// true and, until its password is changed, every request but reading
	// AccountService, changing the account's password and logging out is
	// refused with 403 PasswordChangeRequired.
	PasswordChangeRequired bool
	// Seed seeds the choice of which requests fail under Faults.ErrorRate.
	Seed uint64
	// Log receives server errors (TLS handshakes, ...). Nil discards them.
	Log *slog.Logger
	// OnPower, if not nil, is called with a system's (or chassis's) path (such as
	// "/redfish/v1/Systems/Node0") and its new PowerState each time a reset
	// changes it (with PowerDelay, when the change settles on the next read).
	// It runs under the BMC's lock: it must not call the BMC, and should only
	// hand the change on (hms sim starts and stops its simulated nodes so).
	OnPower func(system, state string)
}

// BMC is one simulated Redfish service. It is an http.Handler; Serve runs it
// on a listener. All methods are safe for concurrent use.
type BMC struct {
	xname    string
	macs     map[string]string
	tree     *Tree
	log      *slog.Logger
	faults   atomic.Pointer[Faults]
	maxSess  int
	requests atomic.Int64

	mu       sync.Mutex
	changed  map[string][]byte       // resources changed by PATCH or actions
	pending  map[string]pendingPower // power changes waiting for Faults.PowerDelay
	onPower  func(system, state string)
	accounts map[string]*account // by account Id ("" for a tree without accounts)
	sessions map[string]*session // by token
	resets   map[string]int      // accepted resets posted over HTTP, by ResetType
	nextSess int
	rng      *rand.Rand
	handler  http.Handler
}

// account is a login: the Redfish account Id and its credentials.
type account struct {
	id, path, user, password string
	mustChange               bool
}

// session is a live login session.
type session struct {
	id, user, token string
}

// New returns a BMC serving cfg.Tree.
func New(cfg Config) (*BMC, error) {
	if cfg.Tree == nil || cfg.Tree.res == nil {
		return nil, errors.New("redfishsim: Config.Tree is required")
	}
	if err := cfg.Faults.Validate(); err != nil {
		return nil, err
	}
	if cfg.User == "" {
		cfg.User = DefaultUser
	}
	if cfg.Password == "" {
		cfg.Password = DefaultPassword
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	b := &BMC{
		xname: cfg.Xname, macs: maps.Clone(cfg.MACs), tree: cfg.Tree, log: log, maxSess: cfg.MaxSessions, onPower: cfg.OnPower,
		accounts: map[string]*account{},
		rng:      rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
	}
	b.faults.Store(&cfg.Faults)
	if err := b.initAccounts(cfg.User, cfg.Password, cfg.PasswordChangeRequired); err != nil {
		return nil, err
	}
	b.handler = b.routes()
	return b, nil
}

// Xname is the xname the BMC was configured with.
func (b *BMC) Xname() string { return b.xname }

// Handler returns the BMC as an http.Handler (it is one itself).
func (b *BMC) Handler() http.Handler { return b }

// SetFaults replaces the injected faults; requests that arrive afterwards see
// the new ones.
func (b *BMC) SetFaults(f Faults) error {
	if err := f.Validate(); err != nil {
		return err
	}
	b.faults.Store(&f)
	return nil
}

// Faults returns the faults currently injected.
func (b *BMC) Faults() Faults { return *b.faults.Load() }

// Stats are counters of a BMC that tests assert on.
type Stats struct {
	// Requests is the number of HTTP requests received, faulted ones included.
	Requests int64
	// Sessions is the number of live sessions (logins not yet logged out).
	Sessions int
	// Resets counts the Reset actions accepted over HTTP (not BMC.Reset),
	// by ResetType ("On", "ForceOff", ...), whether or not they changed
	// anything: a test's way to see a power call repeated.
	Resets map[string]int
}

// Stats returns the BMC's counters now.
func (b *BMC) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Stats{Requests: b.requests.Load(), Sessions: len(b.sessions), Resets: maps.Clone(b.resets)}
}

// accountsPath is the collection the BMC's logins live in.
const accountsPath = Root + "/AccountService/Accounts"

// initAccounts reads the accounts of the tree and gives the configured user
// its password, renaming the first account if no account has that name.
func (b *BMC) initAccounts(user, password string, mustChange bool) error {
	var first *account
	for _, p := range b.tree.children(accountsPath) {
		body, _, _ := b.lookupLocked(p)
		var a struct{ Id, UserName string }
		if err := json.Unmarshal(body, &a); err != nil {
			return fmt.Errorf("redfishsim: account %s: %w", p, err)
		}
		acc := &account{id: a.Id, path: p, user: a.UserName}
		if acc.id == "" {
			acc.id = p[len(accountsPath)+1:]
		}
		b.accounts[acc.id] = acc
		if first == nil || acc.user == user {
			first = acc
		}
	}
	if first == nil { // a tree without accounts still needs a login
		b.accounts[""] = &account{user: user, password: password, mustChange: mustChange}
		return nil
	}
	first.password, first.mustChange = password, mustChange
	if first.user == user && !mustChange {
		return nil
	}
	first.user = user
	return b.modifyLocked(first.path, func(m map[string]any) error {
		m["UserName"] = user
		if mustChange {
			m["PasswordChangeRequired"] = true
		}
		return nil
	})
}
