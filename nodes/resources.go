package nodes

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/nodes/wire"
)

// Filter selects resources of a list: empty fields match everything.
// Xnames and Groups match any of their values.
type Filter struct {
	Xnames, Groups []string
	Arch, MAC      string
	Names          []string
}

// Item is one stored resource as the API shows it, and its ETag.
type Item struct {
	Resource wire.Resource
	ETag     string
}

// etag is the entity tag of a stored document.
func etag(doc []byte) string {
	sum := sha256.Sum256(doc)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}

// List returns the stored resources of kind that match f, by name.
func (s *Service) List(ctx context.Context, kind string, f Filter) ([]Item, error) {
	rows, err := s.store.Rows(ctx, kind)
	if err != nil {
		return nil, err
	}
	var groups map[string][]string // group name -> members declared by NodeGroups
	if kind == wire.KindComputeNode && len(f.Groups) > 0 {
		if groups, err = s.groupMembers(ctx); err != nil {
			return nil, err
		}
	}
	out := []Item{}
	for _, r := range rows {
		it, err := item(r)
		if err != nil {
			return nil, err
		}
		if f.match(it.Resource, groups) {
			out = append(out, it)
		}
	}
	return out, nil
}

// groupMembers lists the nodes each stored NodeGroup names.
func (s *Service) groupMembers(ctx context.Context) (map[string][]string, error) {
	rows, err := s.store.Rows(ctx, wire.KindNodeGroup)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, r := range rows {
		var g wire.NodeGroup
		if err := json.Unmarshal(r.Doc, &g); err != nil {
			return nil, fmt.Errorf("decode stored group %s: %w", r.Name, err)
		}
		out[g.Name] = g.Nodes
	}
	return out, nil
}

func (f Filter) match(r wire.Resource, groups map[string][]string) bool {
	if len(f.Names) > 0 && !slices.Contains(f.Names, r.Name()) {
		return false
	}
	n := r.ComputeNode
	if n == nil {
		return true
	}
	if len(f.Xnames) > 0 && !slices.Contains(f.Xnames, n.Xname) {
		return false
	}
	if f.Arch != "" && !strings.EqualFold(f.Arch, n.Arch) {
		return false
	}
	if f.MAC != "" {
		m, err := normaliseMAC("mac", f.MAC)
		if err != nil || (m != n.BootMAC && m != n.BMCMAC) {
			return false
		}
	}
	if len(f.Groups) > 0 {
		return slices.ContainsFunc(f.Groups, func(g string) bool {
			return slices.Contains(n.Groups, g) || slices.Contains(groups[g], n.Xname)
		})
	}
	return true
}

// item decodes a stored row, with the daemon's fields (id, last_updated).
func item(r Row) (Item, error) {
	res := wire.Resource{Kind: r.Kind}
	t := r.Updated
	var err error
	switch r.Kind {
	case wire.KindComputeNode:
		res.ComputeNode = new(wire.ComputeNode)
		err = json.Unmarshal(r.Doc, res.ComputeNode)
		res.ComputeNode.ID, res.ComputeNode.LastUpdated = r.Name, &t
	case wire.KindBootProfile:
		res.BootProfile = new(wire.BootProfile)
		err = json.Unmarshal(r.Doc, res.BootProfile)
		res.BootProfile.ID, res.BootProfile.LastUpdated = r.Name, &t
	case wire.KindNodeGroup:
		res.NodeGroup = new(wire.NodeGroup)
		err = json.Unmarshal(r.Doc, res.NodeGroup)
		res.NodeGroup.ID, res.NodeGroup.LastUpdated = r.Name, &t
	}
	if err != nil {
		return Item{}, fmt.Errorf("decode stored %s %s: %w", r.Kind, r.Name, err)
	}
	return Item{Resource: res, ETag: etag(r.Doc)}, nil
}

// Get returns one stored resource (ErrNotFound). A node carries what the
// services observe of it.
func (s *Service) Get(ctx context.Context, kind, name string) (Item, error) {
	r, ok, err := s.store.Row(ctx, kind, name)
	if err != nil {
		return Item{}, err
	}
	if !ok {
		return Item{}, problem.NotFoundf("%s %s is not known to the nodes daemon", kind, name)
	}
	it, err := item(r)
	if err == nil && it.Resource.ComputeNode != nil && s.backend != nil {
		o := s.backend.Observe(ctx, name)
		it.Resource.ComputeNode.Observed = &o
	}
	return it, err
}

// Put applies one resource (create or replace, nothing pruned). ifMatch,
// when not empty, must be the stored resource's ETag ("*": any stored one).
// It returns the stored item and whether it was created.
func (s *Service) Put(ctx context.Context, r wire.Resource, ifMatch string, secrets map[string]wire.Credentials) (Item, bool, error) {
	plan, err := s.applyOne(ctx, r, ifMatch, wire.ApplyRequest{Resources: []wire.Resource{r}, Secrets: secrets})
	if err != nil {
		return Item{}, false, err
	}
	it, err := s.Get(ctx, r.Kind, r.Name())
	return it, plan.Changes[0].Action == wire.ActionCreate, err
}

// Delete removes one resource and what it wrote to the services.
func (s *Service) Delete(ctx context.Context, kind, name, ifMatch string) error {
	r := wire.Resource{Kind: kind}
	switch kind {
	case wire.KindComputeNode:
		r.ComputeNode = &wire.ComputeNode{Xname: name}
	case wire.KindBootProfile:
		r.BootProfile = &wire.BootProfile{Name: name}
	case wire.KindNodeGroup:
		r.NodeGroup = &wire.NodeGroup{Name: name}
	}
	_, err := s.applyOne(ctx, r, ifMatch, wire.ApplyRequest{Resources: []wire.Resource{r}, Delete: true})
	return err
}

// applyOne checks ifMatch and applies req, which names only r.
func (s *Service) applyOne(ctx context.Context, r wire.Resource, ifMatch string, req wire.ApplyRequest) (wire.Plan, error) {
	in, err := normalise(req.Resources)
	if err != nil {
		return wire.Plan{}, err
	}
	name := in.order[0].Name()
	plan, err := s.locked(ctx, in, req, func(stored *State, rows map[Key]Row, sc *Scope) (wire.Plan, error) {
		row, ok := rows[Key{r.Kind, name}]
		if req.Delete && !ok {
			return wire.Plan{}, problem.NotFoundf("%s %s is not known to the nodes daemon", r.Kind, name)
		}
		if err := checkIfMatch(ifMatch, row, ok); err != nil {
			return wire.Plan{}, err
		}
		return s.applyLocked(ctx, in, req, stored, rows, sc)
	})
	if err != nil {
		return plan, err
	}
	for _, c := range plan.Changes {
		if c.Error != "" {
			return plan, problem.Unavailablef("%s %s: %s", c.Kind, c.Name, c.Error)
		}
	}
	return plan, nil
}

func checkIfMatch(ifMatch string, row Row, ok bool) error {
	switch {
	case ifMatch == "":
		return nil
	case ifMatch == "*" && ok:
		return nil
	case ok && slices.Contains(strings.Split(strings.ReplaceAll(ifMatch, " ", ""), ","), etag(row.Doc)):
		return nil
	}
	return fmt.Errorf("If-Match %s does not match the stored resource: %w", ifMatch, ErrPrecondition)
}
