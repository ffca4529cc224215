// Package auth authenticates and authorizes the callers of the suite's
// daemons: a Bearer JWT, signed by a key of a JWKS (fetched from -jwks-url,
// cached, refetched when a token names an unknown key) or of a static key
// file, checked for issuer, audience and validity period, and the roles it
// carries (admin, operator, viewer, node) checked against the daemon's
// route table. A token accepted is remembered, by its SHA-256, until its exp
// or a change of its keys, so a token presented again costs no signature
// check (tokenCache). It also gives the suite's own clients their token.
//
// Every daemon declares one Table (route pattern -> Access) in its domain
// package (layout/authz.go, ...); its main registers the shared flags with
// RegisterFlags and wraps its handler with Config.Wrap. Modes: off (no key
// source configured: every route is open, as HMS's services are behind their
// gateway), shadow (-auth-shadow: decide and log, never refuse; for rollout)
// and enforce.
package auth

import (
	"context"
	"errors"
	"slices"
)

// Role is what a token's roles claim grants, as the suite reads it. Other
// role names a token carries (Keycloak's offline_access, ...) are ignored.
type Role string

// The roles of the suite, from most to least powerful; node stands apart.
const (
	// Admin may call every route.
	Admin Role = "admin"
	// Operator may change state: components, power, boot, subscriptions.
	Operator Role = "operator"
	// Viewer may read, never credentials.
	Viewer Role = "viewer"
	// Node speaks only for the xname in the token's sub: its heartbeats,
	// its boot script and cloud-init, its own subscription, its discovery
	// credentials.
	Node Role = "node"
	// SCN may only deliver state-change notifications to the SCN
	// receivers (hmnfd's and bss's POST /scn): what hsm and hmnfd send
	// their subscribers, whichever host a subscriber is on, so a token a
	// subscriber receives is worth nothing else.
	SCN Role = "scn"
)

// Roles lists the roles the suite knows, in the order -help-auth shows them.
func Roles() []Role { return []Role{Admin, Operator, Viewer, Node, SCN} }

// ErrUnauthenticated is a request without a valid token (401).
var ErrUnauthenticated = errors.New("unauthenticated")

// ErrForbidden is a valid token whose roles do not allow the route (403).
var ErrForbidden = errors.New("forbidden")

// Principal is the caller a valid token names.
type Principal struct {
	// Subject is the token's sub: a user, a service, or for the node role
	// the node's xname (normalized).
	Subject string
	// Roles are the suite roles the token carries, without duplicates.
	Roles []Role
}

// Has reports whether p carries role r.
func (p Principal) Has(r Role) bool { return slices.Contains(p.Roles, r) }

type principalKey struct{}

// WithPrincipal returns ctx carrying p; the guard puts the caller there for
// handlers that need it.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the caller the guard authenticated, if any.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
