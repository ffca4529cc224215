package statemgr

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hmsuite/hms/internal/problem"
)

// getGroup returns one group (or partition) with its members, restricted to the
// members of partition part if part is not empty ("null": members in no partition).
func (s *Store) getGroup(ctx context.Context, kind, name, part string) (glGroupRow, error) {
	g, err := glLoadGroup(ctx, s.db.R, kind, name)
	if err != nil {
		return g, err
	}
	g.members, err = s.glMembers(ctx, name, part)
	return g, err
}

// groupMembers returns the members of one group (or partition), see getGroup.
func (s *Store) groupMembers(ctx context.Context, kind, name, part string) ([]string, error) {
	if _, err := glLoadGroup(ctx, s.db.R, kind, name); err != nil {
		return nil, err
	}
	return s.glMembers(ctx, name, part)
}

func (s *Store) glMembers(ctx context.Context, name, part string) ([]string, error) {
	q := `SELECT m.component_id FROM component_group_members m WHERE m.group_name = ?`
	args := []any{name}
	switch part {
	case "":
	case "null":
		q += ` AND NOT EXISTS (SELECT 1 FROM component_group_members p WHERE p.component_id = m.component_id AND p.exclusive_key = '#partition')`
	default:
		q += ` AND EXISTS (SELECT 1 FROM component_group_members p WHERE p.component_id = m.component_id AND p.exclusive_key = '#partition' AND p.group_name = ?)`
		args = append(args, part)
	}
	rows, err := s.db.R.QueryContext(ctx, q+` ORDER BY m.component_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list members of %s: %w", name, err)
	}
	defer rows.Close()
	ids := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("list members of %s: %w", name, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list members of %s: %w", name, err)
	}
	return ids, nil
}

// patchGroup updates description and/or tags of a group (or partition).
func (s *Store) patchGroup(ctx context.Context, kind, name string, p GroupPatch) error {
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
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
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
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
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
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
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
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

// listMemberships returns the memberships of the selected components, sorted by
// ID: one ordered scan of the components and one of their memberships, merged,
// inside one read transaction so both see the same snapshot.
func (s *Store) listMemberships(ctx context.Context, sel glSelection) ([]Membership, error) {
	tx, err := s.db.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("list memberships: %w", err)
	}
	defer tx.Rollback()
	where, args := sel.where()
	out, err := glScanIDs(ctx, tx, `SELECT c.id FROM components c WHERE `+where+` ORDER BY c.id`, args)
	if err != nil {
		return nil, err
	}
	// component_group_members_component covers this query, and exclusive_key tells
	// partitions from groups, so no join with component_groups is needed.
	q := `SELECT component_id, group_name, exclusive_key FROM component_group_members ORDER BY component_id`
	if !sel.empty() {
		// Driven by the filtered components, in their primary-key order.
		q = `SELECT m.component_id, m.group_name, m.exclusive_key FROM components c
			JOIN component_group_members m ON m.component_id = c.id WHERE ` + where + ` ORDER BY c.id`
	} else {
		args = nil
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list memberships: %w", err)
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		var id, name string
		var key sql.NullString
		if err := rows.Scan(&id, &name, &key); err != nil {
			return nil, fmt.Errorf("list memberships: %w", err)
		}
		for i < len(out) && out[i].ID < id {
			i++
		}
		if i == len(out) || out[i].ID != id {
			continue // both scans use the same order and snapshot; this cannot happen
		}
		if key.String == glPartitionKey {
			out[i].PartitionName = name
		} else {
			out[i].GroupLabels = append(out[i].GroupLabels, name)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list memberships: %w", err)
	}
	for _, m := range out {
		slices.Sort(m.GroupLabels)
	}
	return out, nil
}

// glScanIDs runs a query of component IDs and returns empty memberships for them.
func glScanIDs(ctx context.Context, tx *sql.Tx, q string, args []any) ([]Membership, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list memberships: %w", err)
	}
	defer rows.Close()
	out := []Membership{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("list memberships: %w", err)
		}
		out = append(out, Membership{ID: id, GroupLabels: []string{}})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list memberships: %w", err)
	}
	return out, nil
}
