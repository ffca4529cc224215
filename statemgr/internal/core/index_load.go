package core

import (
	"context"
	"database/sql"
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

// WithGroups calls fn with the sorted records under the index's read lock,
// and, if f filters on groups, with f able to look memberships up.
func (s *Store) WithGroups(f *Filter, fn func(all []*Record)) {
	s.Ix.View(func(all []*Record) {
		if !f.ByGroup() {
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
