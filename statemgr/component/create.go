package component

import (
	"context"
	"fmt"
	"log/slog"

	"golang.org/x/sync/errgroup"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// newRecord validates c (element i of a request, for error messages) and
// returns its record with normalised enums and HMS defaults (Flag OK,
// Enabled true).
func newRecord(field string, c hsm.Component, vs *core.VocabSet) (*core.Record, error) {
	t := xname.TypeOf(c.ID)
	if t == xname.TypeInvalid || t == xname.TypeAll || t == xname.TypeAllComp || t == xname.TypeAllSvc {
		return nil, problem.Invalidf("%s.ID: %q is not a valid component xname", field, c.ID)
	}
	r := &core.Record{ID: xname.Normalize(c.ID), Type: string(t), Enabled: true, Flag: hsm.FlagOK,
		SoftwareStatus: c.SoftwareStatus, Subtype: c.Subtype}
	if c.Type != "" {
		if ct, ok := xname.ParseType(c.Type); !ok || ct != t {
			return nil, problem.Invalidf("%s.Type: %q does not match the type of %s (%s)", field, c.Type, r.ID, t)
		}
	}
	if c.State == "" {
		return nil, problem.Invalidf("%s.State: required", field)
	}
	if c.Enabled != nil {
		r.Enabled = *c.Enabled
	}
	if c.NID != nil {
		if *c.NID < 0 {
			return nil, problem.Invalidf("%s.NID: %d is negative", field, *c.NID)
		}
		r.NID, r.HasNID, r.NIDChanged = *c.NID, true, true
	}
	for _, e := range []struct {
		enum *hsm.Enum
		in   string
		out  *string
	}{
		{&hsm.States, c.State, &r.State}, {&hsm.Flags, c.Flag, &r.Flag}, {&vs.Roles, c.Role, &r.Role},
		{&vs.SubRoles, c.SubRole, &r.SubRole}, {&hsm.NetTypes, c.NetType, &r.NetType},
		{&hsm.Arches, c.Arch, &r.Arch}, {&hsm.Classes, c.Class, &r.Class},
	} {
		if e.in == "" {
			continue
		}
		v, ok := e.enum.Normalize(e.in)
		if !ok {
			return nil, problem.Invalidf("%s.%s: invalid value %q", field, e.enum.Field, e.in)
		}
		*e.out = v
	}
	return r, nil
}

// UpsertComponents creates the given components, as one all-or-nothing
// write. Existing components are left alone unless force is set, in which
// case their State, Flag, Subtype, NetType, Arch and Class are overwritten.
// New nodes without a NID or Role take them from the NodeMaps, else from the
// layout source.
func (s *Store) UpsertComponents(ctx context.Context, comps []hsm.Component, force bool, log *slog.Logger) error {
	mode := upsertKeep
	if force {
		mode = upsertForce
	}
	return s.upsertComponents(ctx, comps, mode, log)
}

// UpsertDiscovered is UpsertComponents with force for what a Redfish walk
// found, except that a Ready node found powered On stays Ready with its Flag
// (see upsertDiscovered).
func (s *Store) UpsertDiscovered(ctx context.Context, comps []hsm.Component, log *slog.Logger) error {
	ctx = core.WithCause(ctx, core.Cause{Kind: hsm.CauseDiscovery})
	return s.upsertComponents(ctx, comps, upsertDiscovered, log)
}

// upsertMode is what an upsert does to components that exist.
type upsertMode int

const (
	// upsertKeep leaves existing components as they are.
	upsertKeep upsertMode = iota
	// upsertForce replaces their State and Flag (and the given subtype,
	// net type, arch and class).
	upsertForce
	// upsertDiscovered is upsertForce for what a Redfish walk found, except
	// that a Ready node found powered On stays Ready with its Flag: power-on
	// does not demote a node the OS runs on (the state machine's rule for
	// On), and hbtd would not tell HSM again while the node keeps beating.
	upsertDiscovered
)

func (s *Store) upsertComponents(ctx context.Context, comps []hsm.Component, mode upsertMode, log *slog.Logger) error {
	recs := make([]*core.Record, 0, len(comps))
	pos := make(map[string]int, len(comps))
	vs := s.vocab.Get()
	for i, c := range comps {
		r, err := newRecord(fmt.Sprintf("Components[%d]", i), c, vs)
		if err != nil {
			return err
		}
		if j, dup := pos[r.ID]; dup {
			return problem.Invalidf("Components[%d].ID: %s is also Components[%d]", i, r.ID, j)
		}
		pos[r.ID] = i
		recs = append(recs, r)
	}
	if err := s.applyDefaults(ctx, recs, log); err != nil {
		return err
	}
	_, err := s.core.Write(ctx, func(v *core.View) (*core.Plan, error) { return s.planUpsert(v, recs, mode) })
	return err
}

func (s *Store) planUpsert(v *core.View, recs []*core.Record, mode upsertMode) (*core.Plan, error) {
	p := &core.Plan{}
	groups := core.NewSCNGroups(s.now())
	claimed := map[int]int{}
	for i, r := range recs {
		old := v.Get(r.ID)
		if old == nil {
			if r.HasNID {
				if j, dup := claimed[r.NID]; dup {
					return nil, problem.Conflictf("Components[%d].NID: NID %d is also given to Components[%d]", i, r.NID, j)
				}
				if owner := v.NIDOwner(r.NID); owner != "" {
					return nil, problem.Conflictf("Components[%d].NID: NID %d already belongs to %s", i, r.NID, owner)
				}
				claimed[r.NID] = i
			}
			p.Puts = append(p.Puts, r)
			continue
		}
		if mode == upsertKeep {
			continue
		}
		nr := *old
		nr.NIDChanged = false
		if !(mode == upsertDiscovered && old.State == hsm.StateReady && r.State == hsm.StateOn) {
			nr.State, nr.Flag = r.State, r.Flag
		}
		for _, f := range [][2]*string{{&nr.Subtype, &r.Subtype}, {&nr.NetType, &r.NetType}, {&nr.Arch, &r.Arch}, {&nr.Class, &r.Class}} {
			if *f[1] != "" {
				*f[0] = *f[1]
			}
		}
		p.Puts = append(p.Puts, &nr)
		if nr.State != old.State || nr.Flag != old.Flag {
			groups.Add(core.SCNKey{State: nr.State, Flag: nr.Flag}, nr.ID)
		}
	}
	p.SCNs = groups.SCNs()
	return p, nil
}

// applyDefaults fills NID, Role and SubRole of new nodes that lack them: the
// NodeMaps first, then the layout source. A layout source that fails is
// logged and skipped; the component is created without the defaults, as HMS does.
func (s *Store) applyDefaults(ctx context.Context, recs []*core.Record, log *slog.Logger) error {
	var need []*core.Record
	for _, r := range recs {
		if r.Type == string(xname.Node) && (!r.HasNID || r.Role == "") && s.ix.Get(r.ID) == nil {
			need = append(need, r)
		}
	}
	if len(need) == 0 {
		return nil
	}
	maps, err := s.nodeMapsFor(ctx, need)
	if err != nil {
		return err
	}
	var ask []*core.Record
	for _, r := range need {
		if m, ok := maps[r.ID]; ok {
			fillDefaults(r, core.NodeInfo{NID: &m.NID, Role: m.Role, SubRole: m.SubRole}, s.vocab.Get())
		}
		if !r.HasNID || r.Role == "" {
			ask = append(ask, r)
		}
	}
	if s.layout == nil || len(ask) == 0 {
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, r := range ask {
		g.Go(func() error {
			info, found, err := s.layout.NodeInfo(gctx, r.ID)
			if err != nil {
				if log != nil {
					log.WarnContext(ctx, "sls_lookup_failed", "xname", r.ID, "err", err)
				}
				return nil
			}
			if found {
				for _, d := range fillDefaults(r, info, s.vocab.Get()) {
					if log != nil {
						log.WarnContext(ctx, "sls_value_not_in_vocabulary", "xname", r.ID, "field", d[0], "value", d[1],
							"hint", "add it to the HMSExtendedDefinitions of hms_config.json (hsm -hms-config)")
					}
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// fillDefaults sets what r lacks from info; r is not yet shared. It returns
// the (field, value) pairs of info it dropped because Vocab does not know
// them, so that the caller can say so: shipped HSM drops them silently.
func fillDefaults(r *core.Record, info core.NodeInfo, vs *core.VocabSet) (dropped [][2]string) {
	if !r.HasNID && info.NID != nil {
		r.NID, r.HasNID, r.NIDChanged = *info.NID, true, true
	}
	if r.Role != "" {
		return nil
	}
	if v, ok := vs.Roles.Normalize(info.Role); ok {
		r.Role = v
	} else if info.Role != "" {
		dropped = append(dropped, [2]string{"Role", info.Role})
	}
	if v, ok := vs.SubRoles.Normalize(info.SubRole); ok && r.SubRole == "" {
		r.SubRole = v
	} else if !ok && info.SubRole != "" {
		dropped = append(dropped, [2]string{"SubRole", info.SubRole})
	}
	return dropped
}
