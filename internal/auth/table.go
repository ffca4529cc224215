package auth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"
)

// XnameFunc returns the xname a request speaks for, so a node token may
// call the route for its own xname only; ok false means the request names
// none the guard can check (a node token is then refused).
type XnameFunc func(r *http.Request) (x string, ok bool)

// Access is who may call one route.
type Access struct {
	open bool
	// optional: open, but a valid token's caller is put in the request's
	// context for the handler to decide (optionalWhat says how, for
	// -help-auth).
	optional     bool
	optionalWhat string
	roles        []Role // besides admin, which may call every route
	node         XnameFunc
	// nodeWhat says in -help-auth where the node's xname is read.
	nodeWhat string
}

// Open is a route every caller may use, with or without a token: health,
// liveness, readiness, OpenAPI documents.
func Open() Access { return Access{open: true} }

// Optional is a route the guard lets everyone through to, putting the
// caller of a valid token (if one is given) in the request's context
// (FromContext) for the handler, which decides as what says: a route
// with a check of its own (reds's discovery token) that JWTs may pass too.
func Optional(what string) Access { return Access{open: true, optional: true, optionalWhat: what} }

// Read is a route viewers, operators and admins may call.
func Read() Access { return Access{roles: []Role{Operator, Viewer}} }

// Write is a route operators and admins may call.
func Write() Access { return Access{roles: []Role{Operator}} }

// AdminOnly is a route only admins may call: bulk replacement, settings
// that redirect a daemon, reads that carry credentials.
func AdminOnly() Access { return Access{} }

// SCNIntake is a route that receives state-change notifications: admins
// and the scn role (the token hsm and hmnfd send their subscribers).
func SCNIntake() Access { return Access{roles: []Role{SCN}} }

// OrNode lets a node token call the route too, for the xname f finds in
// the request (what says where, for -help-auth) when it is the token's sub.
func (a Access) OrNode(f XnameFunc, what string) Access {
	a.node, a.nodeWhat = f, what
	return a
}

// String is the access as -help-auth shows it.
func (a Access) String() string {
	if a.optional {
		return "open to the guard; " + a.optionalWhat
	}
	if a.open {
		return "open"
	}
	parts := []string{string(Admin)}
	for _, r := range a.roles {
		parts = append(parts, string(r))
	}
	if a.node != nil {
		parts = append(parts, "node("+a.nodeWhat+")")
	}
	return strings.Join(parts, ", ")
}

// allows reports whether p may call the route r; forbidden names why not.
func (a Access) allows(p Principal, r *http.Request) (ok bool, why string) {
	if a.open || p.Has(Admin) {
		return true, ""
	}
	for _, role := range a.roles {
		if p.Has(role) {
			return true, ""
		}
	}
	if a.node != nil && p.Has(Node) {
		x, found := a.node(r)
		if found && strings.EqualFold(x, p.Subject) {
			return true, ""
		}
		return false, "a node token may call this route for its own xname " + p.Subject + " only"
	}
	return false, "the token's roles do not allow this route (allowed: " + a.String() + ")"
}

// Route is one line of a daemon's route table: a pattern exactly as the
// daemon's mux registers it, and who may call it.
type Route struct {
	Pattern string
	Access  Access
}

// Table is the route-to-role table of one daemon. A route missing from it
// is admin-only: the guard fails closed.
type Table struct {
	Daemon string
	Routes []Route
}

// Print writes t as -help-auth shows it.
func (t Table) Print(w io.Writer) {
	fmt.Fprintf(w, "%s routes and the roles that may call them (admin may call every route):\n", t.Daemon)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, r := range t.Routes {
		fmt.Fprintf(tw, "  %s\t%s\n", r.Pattern, r.Access)
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
}

// Missing lists the patterns of served that t has no line for, and the
// lines of t that are not served; a daemon's test asserts both are empty.
func (t Table) Missing(served []string) (unlisted, stale []string) {
	have := map[string]bool{}
	for _, r := range t.Routes {
		have[r.Pattern] = true
	}
	for _, p := range served {
		if !have[p] {
			unlisted = append(unlisted, p)
		}
		delete(have, p)
	}
	for p := range have {
		stale = append(stale, p)
	}
	slices.Sort(stale)
	return unlisted, stale
}

// PathXname reads the xname from the route's path wildcard name.
func PathXname(name string) XnameFunc {
	return func(r *http.Request) (string, bool) {
		v := r.PathValue(name)
		return v, v != ""
	}
}

// QueryXname reads the xname from the query parameter name; a request
// giving it more than once names none.
func QueryXname(name string) XnameFunc {
	return func(r *http.Request) (string, bool) {
		v := r.URL.Query()[name]
		if len(v) != 1 || v[0] == "" {
			return "", false
		}
		return v[0], true
	}
}

// bodyPeekLimit bounds how much of a body a node's request is read for its
// xname; larger bodies name none.
const bodyPeekLimit = 64 << 10

// BodyXname reads the xname from the top-level string field of a JSON body,
// through cut (nil: the value as it is), and puts the body back for the
// handler. Only node tokens' requests are read.
func BodyXname(field string, cut func(string) string) XnameFunc {
	return func(r *http.Request) (string, bool) {
		if r.Body == nil {
			return "", false
		}
		b, err := io.ReadAll(io.LimitReader(r.Body, bodyPeekLimit+1))
		r.Body = readCloser{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
		if err != nil || len(b) > bodyPeekLimit {
			return "", false
		}
		raw, ok := topField(b, field)
		var v string
		if !ok || json.Unmarshal(raw, &v) != nil || v == "" {
			return "", false
		}
		if cut != nil {
			v = cut(v)
		}
		return v, v != ""
	}
}

type readCloser struct {
	io.Reader
	io.Closer
}

// topField returns the value of the top-level key of the JSON object b that
// equals field ignoring case, as encoding/json matches struct fields. It
// fails when the body is not an object, when no key matches, or when two
// top-level keys match or repeat (even differing only in case): a handler's
// decoder could then read another value than the one authorized (a node's
// token naming itself in "Component" and another node in "component").
func topField(b []byte, field string) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	seen := map[string]bool{}
	var found json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		key, isKey := t.(string)
		if err != nil || !isKey {
			return nil, false
		}
		folded := strings.ToLower(key)
		if seen[folded] {
			return nil, false
		}
		seen[folded] = true
		var val json.RawMessage
		if dec.Decode(&val) != nil {
			return nil, false
		}
		if strings.EqualFold(key, field) {
			found = val
		}
	}
	return found, found != nil
}
