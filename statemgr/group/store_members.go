package group

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// getGroup returns one group (or partition) with its members, restricted to the
// members of partition part if part is not empty ("null": members in no partition).
func (s *Store) getGroup(kind, name, part string) (core.GroupRow, error) {
	g := s.gx.Group(kind, name)
	if g == nil {
		return core.GroupRow{}, problem.NotFoundf("no %s %s", kind, name)
	}
	row := *g
	if part != "" {
		row.Members = s.gx.InPartition(g.Members, part)
	}
	return row, nil
}

// groupMembers returns the members of one group (or partition), see getGroup.
func (s *Store) groupMembers(kind, name, part string) ([]string, error) {
	g, err := s.getGroup(kind, name, part)
	return glNonNil(g.Members), err
}

// groupWrite runs fn in a write transaction and, once it has committed, calls
// publish to bring the group index up to date. The caller holds s.gmu, so
// the index sees group commits in their order.
func (s *Store) groupWrite(ctx context.Context, publish func(), fn func(tx *sql.Tx) error) error {
	if err := s.db.WriteTx(ctx, fn); err != nil {
		return err
	}
	publish()
	return nil
}

// patchGroup updates description and/or tags of a group (or partition).
func (s *Store) patchGroup(ctx context.Context, kind, name string, p hsm.GroupPatch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.groupWrite(ctx, func() { s.gx.Patched(name, p) }, func(tx *sql.Tx) error {
		if _, err := glLoadGroup(ctx, tx, kind, name); err != nil {
			return err
		}
		if p.Description != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE component_groups SET description = ? WHERE name = ?`, *p.Description, name); err != nil {
				return fmt.Errorf("update %s %s: %w", kind, name, err)
			}
		}
		if p.Tags != nil {
			tags, err := json.Marshal(glNonNil(*p.Tags))
			if err != nil {
				return fmt.Errorf("encode tags: %w", err)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE component_groups SET tags = ? WHERE name = ?`, string(tags), name); err != nil {
				return fmt.Errorf("update %s %s: %w", kind, name, err)
			}
		}
		return nil
	})
}

// deleteGroup deletes a group (or partition); its memberships go with it.
func (s *Store) deleteGroup(ctx context.Context, kind, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.groupWrite(ctx, func() { s.gx.Deleted(name) }, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM component_groups WHERE name = ? AND type = ?`, name, kind)
		if err != nil {
			return fmt.Errorf("delete %s %s: %w", kind, name, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return problem.NotFoundf("no %s %s", kind, name)
		}
		return nil
	})
}

// addGroupMember adds component id to a group (or partition).
func (s *Store) addGroupMember(ctx context.Context, kind, name, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.groupWrite(ctx, func() { s.gx.MemberAdded(name, id) }, func(tx *sql.Tx) error {
		g, err := glLoadGroup(ctx, tx, kind, name)
		if err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM component_group_members WHERE group_name = ? AND component_id = ?`, name, id).Scan(&n); err != nil {
			return fmt.Errorf("add member %s: %w", id, err)
		}
		if n > 0 {
			return problem.Conflictf("id: %s is already a member of %s %s", id, kind, name)
		}
		return insertMembers(ctx, tx, g, []string{id}, "id")
	})
}

// removeGroupMember removes component id from a group (or partition).
func (s *Store) removeGroupMember(ctx context.Context, kind, name, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.groupWrite(ctx, func() { s.gx.MemberRemoved(name, id) }, func(tx *sql.Tx) error {
		if _, err := glLoadGroup(ctx, tx, kind, name); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM component_group_members WHERE group_name = ? AND component_id = ?`, name, id)
		if err != nil {
			return fmt.Errorf("remove member %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return problem.NotFoundf("%s is not a member of %s %s", id, kind, name)
		}
		return nil
	})
}

// memberships returns the memberships of the components f selects, in ID
// order, as the JSON array GET /memberships answers.
func (s *Store) memberships(f core.Filter) []byte {
	var b []byte
	s.ix.ViewOf(&f, func(all []*core.Record) {
		s.gx.View(func(of func(string) *core.CompGroups) {
			f.GroupsOf = of
			b = make([]byte, 0, 64+len(all)*96)
			b = append(b, '[')
			every := f.SelectsAll()
			for _, r := range all {
				if !every && !f.Match(r) {
					continue
				}
				if len(b) > 1 {
					b = append(b, ',')
				}
				b = appendMembership(b, r.ID, of(r.ID))
			}
			b = append(b, "]\n"...)
		})
	})
	return b
}

// membership returns the memberships of component id, or ErrNotFound.
func (s *Store) membership(id string) (hsm.Membership, error) {
	if s.ix.Get(id) == nil {
		return hsm.Membership{}, problem.NotFoundf("no component %s", id)
	}
	m := hsm.Membership{ID: id, GroupLabels: []string{}}
	s.gx.View(func(of func(string) *core.CompGroups) {
		if cg := of(id); cg != nil {
			m.PartitionName = cg.Partition
			m.GroupLabels = append(m.GroupLabels, cg.Groups...)
		}
	})
	return m, nil
}

// appendMembership appends the JSON of one Membership, as encoding/json
// writes it; by hand because /memberships lists every component.
func appendMembership(b []byte, id string, cg *core.CompGroups) []byte {
	b = append(b, `{"id":`...)
	b = core.AppendString(b, id)
	b = append(b, `,"partitionName":`...)
	b = core.AppendString(b, cg.PartitionName())
	b = append(b, `,"groupLabels":[`...)
	for i, l := range cg.GroupList() {
		if i > 0 {
			b = append(b, ',')
		}
		b = core.AppendString(b, l)
	}
	return append(b, "]}"...)
}
