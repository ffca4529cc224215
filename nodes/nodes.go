// Package nodes is the node-centric API behind `hms apply`: an
// administrator declares ComputeNodes, BootProfiles and NodeGroups (package
// nodes/wire), and the daemon translates them into the services that hold
// them (SLS hardware, HSM components, Ethernet interfaces, Redfish
// endpoints and groups, BSS boot parameters and cloud-init). Apply is
// declarative: the plan is the difference between the declared set and
// what the daemon owns, per resource and per service; applying the same
// set twice writes nothing. The daemon is the only writer of what it owns,
// and owns only what it wrote: its store lists its resources, and the
// services carry a mark (the HSM group OwnerGroup, the BSS meta-data key
// OwnerKey), so a node made by hand is never pruned.
package nodes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/sealed"
	"github.com/hmsuite/hms/nodes/wire"
)

// ErrPrecondition is an If-Match that does not match the stored resource
// (HTTP 412).
var ErrPrecondition = errors.New("precondition failed")

// Backend translates the owned state into the services and observes
// nodes there. A Service without one keeps its own store only.
type Backend interface {
	// Plan compares the services with what st declares (owned lists
	// everything the daemon owns before and after) and returns the writes
	// that make them agree, by resource, for the resources of scope only:
	// the others may be another apply's, in progress.
	Plan(ctx context.Context, st *State, owned *State, secrets map[string]Secret, scope *Scope) (*Writes, error)
	// Apply carries the writes out; a failed write is reported on its
	// resource in the returned map (resource key -> error).
	Apply(ctx context.Context, w *Writes) map[Key]error
	// Observe returns what the services see of one node.
	Observe(ctx context.Context, xname string) wire.Observed
}

// Key names one resource: its kind and name.
type Key struct{ Kind, Name string }

// State is a whole owned set: nodes, profiles and groups by name.
type State struct {
	Nodes    map[string]*wire.ComputeNode
	Profiles map[string]*wire.BootProfile
	Groups   map[string]*wire.NodeGroup
}

func newState() *State {
	return &State{Nodes: map[string]*wire.ComputeNode{}, Profiles: map[string]*wire.BootProfile{}, Groups: map[string]*wire.NodeGroup{}}
}

// Config is what a Service needs besides its store.
type Config struct {
	// Backend writes to the services; nil keeps the store only.
	Backend Backend
	// Box seals BMC credentials; nil refuses requests that carry secrets.
	Box *sealed.Box
	Now func() time.Time
	Log *slog.Logger
}

// Service owns the declared resources: it plans and applies sets, and
// serves the resources one by one.
type Service struct {
	store   *Store
	backend Backend
	box     sealer // nil: no key
	now     func() time.Time
	log     *slog.Logger
	// locks keeps two applies from writing one resource at once (an
	// apply plans against what it read, so two interleaving on one
	// resource would each undo the other); applies of disjoint
	// resources run together.
	locks *keyLocks
}

// New returns a Service over store.
func New(store *Store, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	s := &Service{store: store, backend: cfg.Backend, now: cfg.Now, log: cfg.Log, locks: newKeyLocks()}
	if cfg.Box != nil {
		s.box = cfg.Box
	}
	return s
}

// sealer seals and opens credentials (a *sealed.Box).
type sealer interface {
	Seal(id string, plain []byte) ([]byte, error)
	Open(id string, sealed []byte) ([]byte, error)
}

// loadState reads every stored resource.
func (s *Service) loadState(ctx context.Context) (*State, map[Key]Row, error) {
	rows, err := s.store.Rows(ctx, "")
	if err != nil {
		return nil, nil, err
	}
	st, byKey := newState(), make(map[Key]Row, len(rows))
	for _, r := range rows {
		byKey[Key{r.Kind, r.Name}] = r
		if err := st.add(r); err != nil {
			return nil, nil, err
		}
	}
	return st, byKey, nil
}

// add decodes a stored row into st.
func (st *State) add(r Row) error {
	var err error
	switch r.Kind {
	case wire.KindComputeNode:
		n := new(wire.ComputeNode)
		err, st.Nodes[r.Name] = json.Unmarshal(r.Doc, n), n
	case wire.KindBootProfile:
		p := new(wire.BootProfile)
		err, st.Profiles[r.Name] = json.Unmarshal(r.Doc, p), p
	case wire.KindNodeGroup:
		g := new(wire.NodeGroup)
		err, st.Groups[r.Name] = json.Unmarshal(r.Doc, g), g
	default:
		err = fmt.Errorf("unknown kind %q", r.Kind)
	}
	if err != nil {
		return fmt.Errorf("decode stored %s %s: %w", r.Kind, r.Name, err)
	}
	return nil
}

// clone copies the maps (not the resources) of st.
func (st *State) clone() *State {
	c := newState()
	for k, v := range st.Nodes {
		c.Nodes[k] = v
	}
	for k, v := range st.Profiles {
		c.Profiles[k] = v
	}
	for k, v := range st.Groups {
		c.Groups[k] = v
	}
	return c
}

// union is every resource of a or b (b's version when both have it).
func union(a, b *State) *State {
	u := a.clone()
	for k, v := range b.Nodes {
		u.Nodes[k] = v
	}
	for k, v := range b.Profiles {
		u.Profiles[k] = v
	}
	for k, v := range b.Groups {
		u.Groups[k] = v
	}
	return u
}

// doc is the stored form of a resource: its canonical JSON without the
// daemon's fields (id, last_updated, observed).
func doc(r wire.Resource) json.RawMessage {
	var b []byte
	switch {
	case r.ComputeNode != nil:
		n := *r.ComputeNode
		n.ID, n.LastUpdated, n.Observed = "", nil, nil
		b, _ = json.Marshal(n)
	case r.BootProfile != nil:
		p := *r.BootProfile
		p.ID, p.LastUpdated = "", nil
		b, _ = json.Marshal(p)
	case r.NodeGroup != nil:
		g := *r.NodeGroup
		g.ID, g.LastUpdated = "", nil
		b, _ = json.Marshal(g)
	}
	return b
}

// resources lists st's resources in apply order: profiles, groups, nodes.
func (st *State) resources() []wire.Resource {
	var out []wire.Resource
	for _, k := range sortedKeys(st.Profiles) {
		out = append(out, wire.Resource{Kind: wire.KindBootProfile, BootProfile: st.Profiles[k]})
	}
	for _, k := range sortedKeys(st.Groups) {
		out = append(out, wire.Resource{Kind: wire.KindNodeGroup, NodeGroup: st.Groups[k]})
	}
	for _, k := range sortedKeys(st.Nodes) {
		out = append(out, wire.Resource{Kind: wire.KindComputeNode, ComputeNode: st.Nodes[k]})
	}
	return out
}

// has reports whether st holds the resource k.
func (st *State) has(k Key) bool {
	switch k.Kind {
	case wire.KindComputeNode:
		return st.Nodes[k.Name] != nil
	case wire.KindBootProfile:
		return st.Profiles[k.Name] != nil
	case wire.KindNodeGroup:
		return st.Groups[k.Name] != nil
	}
	return false
}

// checkSecrets refuses a node whose bmc_credentials_file is neither in
// the request nor stored from an earlier apply.
func (s *Service) checkSecrets(ctx context.Context, v *vault, st *set, desired *State, secrets map[string]wire.Credentials) error {
	if len(secrets) > 0 && s.box == nil {
		return problem.Invalidf("this nodes daemon has no key to seal BMC credentials with (-cred-key-file)")
	}
	if err := checkSharedSecrets(ctx, v, st, desired, secrets); err != nil {
		return err
	}
	var errs []error
	for _, x := range sortedKeys(st.nodes) {
		ref := st.nodes[x].BMCCredentialsFile
		if ref == "" {
			continue
		}
		if _, ok := secrets[ref]; ok {
			continue
		}
		if e, err := v.get(ctx, ref); err != nil {
			return err
		} else if !e.stored {
			errs = append(errs, fmt.Errorf("%s %q: no credentials for bmc_credentials_file %q", wire.KindComputeNode, x, ref))
		}
	}
	if len(errs) > 0 {
		return problem.Invalidf("invalid set: %v", errors.Join(errs...))
	}
	return nil
}

// checkSharedSecrets refuses new content for a reference that nodes
// outside this apply still use: two files of one name in two directories
// (rack1/bmc.yaml, rack2/bmc.yaml) would otherwise replace the other
// rack's BMC logins with this one's.
func checkSharedSecrets(ctx context.Context, v *vault, st *set, desired *State, secrets map[string]wire.Credentials) error {
	for _, ref := range sortedKeys(secrets) {
		var others []string
		for _, x := range sortedKeys(desired.Nodes) {
			if _, mine := st.nodes[x]; !mine && desired.Nodes[x].BMCCredentialsFile == ref {
				others = append(others, x)
			}
		}
		if len(others) == 0 {
			continue
		}
		e, err := v.get(ctx, ref)
		if err != nil {
			return err
		}
		if e.open && e.creds != secrets[ref] {
			return problem.Conflictf("bmc_credentials_file %q: its content differs from the one nodes %s (not in this set) were applied with; give the file another name, or apply those nodes with it too",
				ref, strings.Join(others, ","))
		}
	}
	return nil
}

// secrets returns the credentials of every reference the state uses:
// from the request (Changed when they differ from the stored ones), else
// unsealed from the store.
func secrets(ctx context.Context, v *vault, st *State, given map[string]wire.Credentials) (map[string]Secret, error) {
	out := map[string]Secret{}
	for _, n := range st.Nodes {
		ref := n.BMCCredentialsFile
		if _, done := out[ref]; ref == "" || done {
			continue
		}
		e, err := v.get(ctx, ref)
		if err != nil {
			return nil, err
		}
		c, isGiven := given[ref]
		switch {
		case isGiven:
			out[ref] = Secret{Credentials: c, Changed: !e.open || c != e.creds}
		case e.open:
			out[ref] = Secret{Credentials: e.creds}
		}
	}
	return out, nil
}

// vault reads the stored credentials for one apply: each reference is
// read, and unsealed, once.
type vault struct {
	s    *Service
	seen map[string]vaultEntry
}

// vaultEntry is one reference's stored credentials: stored when the store
// holds them, open when they could be unsealed (the daemon has a key).
type vaultEntry struct {
	creds        wire.Credentials
	stored, open bool
}

func (s *Service) vault() *vault { return &vault{s: s, seen: map[string]vaultEntry{}} }

func (v *vault) get(ctx context.Context, ref string) (vaultEntry, error) {
	if e, ok := v.seen[ref]; ok {
		return e, nil
	}
	var e vaultEntry
	b, ok, err := v.s.store.Secret(ctx, ref)
	if err != nil {
		return e, err
	}
	e.stored = ok
	if ok && v.s.box != nil {
		plain, err := v.s.box.Open(ref, b)
		if err != nil {
			return e, err
		}
		if err := json.Unmarshal(plain, &e.creds); err != nil {
			return e, fmt.Errorf("decode secret %s: %w", ref, err)
		}
		e.open = true
	}
	v.seen[ref] = e
	return e, nil
}

// sealSecrets stores the request's credentials sealed.
func (s *Service) sealSecrets(ctx context.Context, given map[string]wire.Credentials) error {
	for _, ref := range sortedKeys(given) {
		plain, _ := json.Marshal(given[ref])
		b, err := s.box.Seal(ref, plain)
		if err != nil {
			return err
		}
		if err := s.store.PutSecret(ctx, ref, b); err != nil {
			return err
		}
	}
	return nil
}
