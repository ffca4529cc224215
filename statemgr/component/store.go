// Package component serves HSM's /State/Components and /Defaults/NodeMaps:
// the components with their state machine, and the default NIDs, Roles and
// SubRoles new nodes take from the NodeMaps or from SLS.
package component

import (
	"context"
	"time"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// Store is the components and the NodeMaps, over the shared core (whose
// component index and commit pipeline hold the components).
type Store struct {
	core   coreWriter
	db     *sqldb.DB
	now    func() time.Time
	ix     *core.Index
	layout core.LayoutSource
	vocab  *core.Vocab
}

// coreWriter is what the components use of the shared core's commit
// pipeline and indexes.
type coreWriter interface {
	Write(ctx context.Context, p func(v *core.View) (*core.Plan, error)) (*core.Plan, error)
	Matching(f core.Filter, fn func(r *core.Record))
	WithGroups(f *core.Filter, fn func(all []*core.Record))
}

// NewStore returns the components kept in c.
func NewStore(c *core.Store) *Store {
	return &Store{core: c, db: c.DB, now: c.Now, ix: c.Ix, layout: c.Layout, vocab: c.Vocab()}
}

// Component returns the component with the given xname.
func (s *Store) Component(id string) (hsm.Component, error) {
	r := s.ix.Get(xname.Normalize(id))
	if r == nil {
		return hsm.Component{}, problem.NotFoundf("no such xname.") // the shipped HSM's words
	}
	return r.Component(), nil
}

// componentByNID returns the component holding nid.
func (s *Store) componentByNID(nid int) (hsm.Component, error) {
	r := s.ix.ByNID(nid)
	if r == nil {
		return hsm.Component{}, problem.NotFoundf("no such NID.")
	}
	return r.Component(), nil
}

// Components returns the components f matches, in ID order.
func (s *Store) Components(ctx context.Context, f core.Filter) ([]hsm.Component, error) {
	var out []hsm.Component
	s.core.Matching(f, func(r *core.Record) { out = append(out, r.Component()) })
	return out, nil
}

// componentsJSON returns {"Components":[...]} for the components f matches,
// encoded straight from the index; the unfiltered listing is cached between
// writes. The caller must not modify the result.
func (s *Store) componentsJSON(ctx context.Context, f core.Filter) ([]byte, error) {
	if f.All() {
		return s.ix.FullList(), nil
	}
	var b []byte
	s.core.WithGroups(&f, func(all []*core.Record) { b = core.EncodeList(all, &f) })
	return b, nil
}

// normIDs validates and normalises a list of xnames, dropping duplicates.
// field names the list in errors ("ComponentIDs").
func normIDs(field string, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, problem.Invalidf("%s: at least one xname is required", field)
	}
	out := make([]string, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for i, id := range ids {
		if !xname.Valid(id) {
			return nil, problem.Invalidf("%s[%d]: %q is not a valid xname", field, i, id)
		}
		n := xname.Normalize(id)
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// editFunc returns the new record for old and the SCN key of the change, or
// ok=false when old is unchanged.
type editFunc func(old *core.Record) (nr *core.Record, key core.SCNKey, ok bool)

// patch applies edit to every ID in ids as one all-or-nothing write: any
// unknown ID fails the whole call with ErrNotFound. It returns how many
// components changed.
func (s *Store) patch(ctx context.Context, ids []string, edit editFunc) (int, error) {
	p, err := s.core.Write(ctx, func(v *core.View) (*core.Plan, error) {
		olds := make([]*core.Record, len(ids))
		for i, id := range ids {
			if olds[i] = v.Get(id); olds[i] == nil {
				return nil, problem.NotFoundf("component %s: no such component", id)
			}
		}
		p := &core.Plan{Update: true}
		groups := core.NewSCNGroups(s.now())
		for _, old := range olds {
			nr, key, ok := edit(old)
			if !ok {
				continue
			}
			p.Puts = append(p.Puts, nr)
			groups.Add(key, nr.ID)
		}
		p.SCNs = groups.SCNs()
		return p, nil
	})
	if err != nil {
		return 0, err
	}
	return len(p.Puts), nil
}

// UpdateState applies a StateData update to ids through the state machine.
// Components the machine refuses, or that would not change, are skipped
// silently; the count of changed components is returned.
func (s *Store) UpdateState(ctx context.Context, ids []string, u StateUpdate) (int, error) {
	return s.patch(ctx, ids, func(old *core.Record) (*core.Record, core.SCNKey, bool) {
		st, fl, ok := u.Apply(old.State, old.Flag)
		if !ok {
			return nil, core.SCNKey{}, false
		}
		nr := *old
		nr.State, nr.Flag, nr.NIDChanged = st, fl, false
		return &nr, core.SCNKey{State: st, Flag: fl}, true
	})
}

// updateFlag sets the Flag of ids.
func (s *Store) updateFlag(ctx context.Context, ids []string, flag string) (int, error) {
	return s.patch(ctx, ids, func(old *core.Record) (*core.Record, core.SCNKey, bool) {
		if old.Flag == flag {
			return nil, core.SCNKey{}, false
		}
		nr := *old
		nr.Flag, nr.NIDChanged = flag, false
		return &nr, core.SCNKey{Flag: flag}, true
	})
}

// updateEnabled sets Enabled on ids.
func (s *Store) updateEnabled(ctx context.Context, ids []string, enabled bool) (int, error) {
	return s.patch(ctx, ids, func(old *core.Record) (*core.Record, core.SCNKey, bool) {
		if old.Enabled == enabled {
			return nil, core.SCNKey{}, false
		}
		nr := *old
		nr.Enabled, nr.NIDChanged = enabled, false
		return &nr, core.SCNKey{Enabled: 1 + btoi(enabled)}, true
	})
}

// updateSoftwareStatus sets SoftwareStatus on ids.
func (s *Store) updateSoftwareStatus(ctx context.Context, ids []string, status string) (int, error) {
	return s.patch(ctx, ids, func(old *core.Record) (*core.Record, core.SCNKey, bool) {
		if old.SoftwareStatus == status {
			return nil, core.SCNKey{}, false
		}
		nr := *old
		nr.SoftwareStatus, nr.NIDChanged = status, false
		return &nr, core.SCNKey{SoftwareStatus: status}, true
	})
}

// updateRole sets Role and SubRole on ids.
func (s *Store) updateRole(ctx context.Context, ids []string, role, subRole string) (int, error) {
	return s.patch(ctx, ids, func(old *core.Record) (*core.Record, core.SCNKey, bool) {
		if old.Role == role && old.SubRole == subRole {
			return nil, core.SCNKey{}, false
		}
		nr := *old
		nr.Role, nr.SubRole, nr.NIDChanged = role, subRole, false
		return &nr, core.SCNKey{Role: role, SubRole: subRole}, true
	})
}

// nIDUpdate assigns NID to the component ID.
type nIDUpdate struct {
	ID  string
	NID int
}

// updateNIDs assigns NIDs; a NID held by a component outside the call, or
// given twice, is ErrConflict and nothing is applied.
func (s *Store) updateNIDs(ctx context.Context, ups []nIDUpdate) (int, error) {
	p, err := s.core.Write(ctx, func(v *core.View) (*core.Plan, error) {
		want := map[int]string{}
		moving := map[string]bool{}
		for _, u := range ups {
			moving[u.ID] = true
		}
		p := &core.Plan{Update: true}
		groups := core.NewSCNGroups(s.now())
		for i, u := range ups {
			old := v.Get(u.ID)
			if old == nil {
				return nil, problem.NotFoundf("Components[%d].ID: component %s: no such component", i, u.ID)
			}
			if other, dup := want[u.NID]; dup {
				return nil, problem.Conflictf("Components[%d].NID: NID %d given to both %s and %s", i, u.NID, other, u.ID)
			}
			want[u.NID] = u.ID
			if owner := v.NIDOwner(u.NID); owner != "" && owner != u.ID && !moving[owner] {
				return nil, problem.Conflictf("Components[%d].NID: NID %d already belongs to %s", i, u.NID, owner)
			}
			if old.HasNID && old.NID == u.NID {
				continue
			}
			nr := *old
			nr.NID, nr.HasNID, nr.NIDChanged = u.NID, true, true
			p.Puts = append(p.Puts, &nr)
			groups.Add(core.SCNKey{NID: u.NID, HasNID: true}, u.ID)
		}
		p.SCNs = groups.SCNs()
		return p, nil
	})
	if err != nil {
		return 0, err
	}
	return len(p.Puts), nil
}

func btoi(b bool) int8 {
	if b {
		return 1
	}
	return 0
}

// DeleteComponent removes one component.
func (s *Store) DeleteComponent(ctx context.Context, id string) error {
	id = xname.Normalize(id)
	_, err := s.core.Write(ctx, func(v *core.View) (*core.Plan, error) {
		if v.Get(id) == nil {
			return nil, problem.NotFoundf("no such xname.")
		}
		return &core.Plan{Dels: []string{id}}, nil
	})
	return err
}

// deleteAllComponents removes every component and returns how many there were.
func (s *Store) deleteAllComponents(ctx context.Context) (int, error) {
	n := 0
	_, err := s.core.Write(ctx, func(v *core.View) (*core.Plan, error) {
		n = s.ix.Len()
		if n == 0 {
			return nil, problem.NotFoundf("no entries to delete")
		}
		return &core.Plan{DelAll: true}, nil
	})
	return n, err
}
