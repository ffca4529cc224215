package core

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// LoadComponents fills the index from the components table.
func (s *Store) LoadComponents(ctx context.Context) error {
	rows, err := s.DB.R.QueryContext(ctx, `SELECT id, type, state, flag, enabled, software_status, role, sub_role,
		nid, subtype, net_type, arch, class, reservation_disabled, locked FROM components`)
	if err != nil {
		return fmt.Errorf("load components: %w", err)
	}
	defer rows.Close()
	var recs []*Record
	for rows.Next() {
		r := &Record{}
		var nid sql.NullInt64
		if err := rows.Scan(&r.ID, &r.Type, &r.State, &r.Flag, &r.Enabled, &r.SoftwareStatus, &r.Role, &r.SubRole,
			&nid, &r.Subtype, &r.NetType, &r.Arch, &r.Class, &r.ReservationDisabled, &r.Locked); err != nil {
			return fmt.Errorf("load components: %w", err)
		}
		r.NID, r.HasNID = int(nid.Int64), nid.Valid
		recs = append(recs, r)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load components: %w", err)
	}
	s.Ix.reset(recs)
	return nil
}

// WithGroups calls fn under the index's read lock with the records f may
// select, in ID order (Index.ViewOf: fn must still Match them), and, if f
// filters on groups, with f able to look memberships up.
func (s *Store) WithGroups(f *Filter, fn func(all []*Record)) {
	s.Ix.ViewOf(f, func(all []*Record) {
		if !f.byGroup() {
			fn(all)
			return
		}
		s.Gx.View(func(of func(string) *CompGroups) {
			f.GroupsOf = of
			fn(all)
			f.GroupsOf = nil
		})
	})
}

// Matching calls fn for each component f selects, in ID order, under the
// index's read lock.
func (s *Store) Matching(f Filter, fn func(r *Record)) {
	s.WithGroups(&f, func(all []*Record) {
		for _, r := range all {
			if f.Match(r) {
				fn(r)
			}
		}
	})
}

// LockBitsChanged re-reads the locked and reservation_disabled columns of ids
// into the in-memory index. The locks code, which owns those columns, calls it
// after each commit that changes them; until then readers see the old bits.
func (s *Store) LockBitsChanged(ctx context.Context, ids []string) error {
	bits := make(map[string][2]bool, len(ids))
	st, err := s.DB.R.PrepareContext(ctx, `SELECT locked, reservation_disabled FROM components WHERE id = ?`)
	if err != nil {
		return fmt.Errorf("read lock bits: %w", err)
	}
	defer st.Close()
	for _, id := range ids {
		var b [2]bool
		err := st.QueryRowContext(ctx, id).Scan(&b[0], &b[1])
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read lock bits of %s: %w", id, err)
		}
		bits[id] = b
	}
	_, err = s.Write(ctx, func(v *View) (*Plan, error) {
		p := &Plan{}
		for id, b := range bits {
			if old := v.Get(id); old != nil && (old.Locked != b[0] || old.ReservationDisabled != b[1]) {
				nr := *old
				nr.Locked, nr.ReservationDisabled, nr.NIDChanged = b[0], b[1], false
				p.Puts = append(p.Puts, &nr)
			}
		}
		return p, nil
	})
	return err
}
