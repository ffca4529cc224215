// Package group serves HSM's /groups, /partitions and /memberships: labelled
// sets of components, each component in at most one partition and in at most
// one group of an exclusive group.
package group

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// Store is the groups and partitions with their members, over the shared
// core (whose membership index it keeps up to date).
type Store struct {
	db *sqldb.DB
	ix *core.Index
	gx *core.GroupIndex
	// mu is the core's GroupMu: every Store over one core serialises its
	// writes with their update of gx.
	mu    *sync.Mutex
	vocab *core.Vocab
}

// NewStore returns the groups kept in c's database.
func NewStore(c *core.Store) *Store {
	return &Store{db: c.DB, ix: c.Ix, gx: c.Gx, mu: &c.GroupMu, vocab: c.Vocab()}
}

// glExisting returns the subset of ids that are rows of components.
func glExisting(ctx context.Context, q core.Queryer, ids []string) (map[string]bool, error) {
	found := make(map[string]bool, len(ids))
	for _, c := range core.Chunks(ids) {
		rows, err := q.QueryContext(ctx, `SELECT id FROM components WHERE id IN (`+core.Placeholders(len(c))+`)`, core.Args(nil, c)...)
		if err != nil {
			return nil, fmt.Errorf("look up components: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("look up components: %w", err)
			}
			found[id] = true
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, fmt.Errorf("look up components: %w", err)
		}
	}
	return found, nil
}

// glPartitionKey is the exclusive_key of partition memberships; '#' cannot
// appear in a label, so no exclusiveGroup collides with it.
const glPartitionKey = "#partition"

// glExclusiveKey is the component_group_members.exclusive_key of a kind's members.
func glExclusiveKey(kind, exclusive string) any {
	switch {
	case kind == core.KindPartition:
		return glPartitionKey
	case exclusive != "":
		return exclusive
	default:
		return nil
	}
}

// insertMembers adds ids to group name inside tx, after checking every ID is a
// component and that no exclusivity rule would break; field names the ids in errors.
func insertMembers(ctx context.Context, tx *sql.Tx, g core.GroupRow, ids []string, field string) error {
	found, err := glExisting(ctx, tx, ids)
	if err != nil {
		return err
	}
	for i, id := range ids {
		if !found[id] {
			return problem.Invalidf("%s[%d]: no component %s", field, i, id)
		}
	}
	key := glExclusiveKey(g.Kind, g.Exclusive)
	if key != nil {
		if err := glCheckExclusive(ctx, tx, g, key, ids); err != nil {
			return err
		}
	}
	// Multi-row INSERTs: per-statement overhead dominates single-row inserts.
	for _, c := range core.Chunks(ids) {
		args := make([]any, 0, 3*len(c))
		for _, id := range c {
			args = append(args, g.Name, id, key)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO component_group_members (group_name, component_id, exclusive_key) VALUES `+
			strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", len(c)), ", "), args...)
		if sqldb.IsUniqueViolation(err) {
			// Only a concurrent writer can get here: the checks above passed.
			return problem.Conflictf("%s: a component is already a member of %s %s or of a group exclusive with it", field, g.Kind, g.Name)
		}
		if err != nil {
			return fmt.Errorf("add members to %s %s: %w", g.Kind, g.Name, err)
		}
	}
	return nil
}

// glCheckExclusive fails with a conflict naming the holder if any of ids is already
// a member under the same exclusive key (another partition, another exclusive group).
func glCheckExclusive(ctx context.Context, tx *sql.Tx, g core.GroupRow, key any, ids []string) error {
	for _, c := range core.Chunks(ids) {
		var id, holder string
		err := tx.QueryRowContext(ctx, `SELECT component_id, group_name FROM component_group_members
			WHERE exclusive_key = ? AND component_id IN (`+core.Placeholders(len(c))+`) LIMIT 1`, core.Args([]any{key}, c)...).Scan(&id, &holder)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			continue
		case err != nil:
			return fmt.Errorf("check exclusivity: %w", err)
		case holder == g.Name:
			return problem.Conflictf("%s is already a member of %s %s", id, g.Kind, g.Name)
		case g.Kind == core.KindPartition:
			return problem.Conflictf("%s is already in partition %s; a component can be in one partition only", id, holder)
		default:
			return problem.Conflictf("%s is already in group %s, which has the same exclusiveGroup %q", id, holder, g.Exclusive)
		}
	}
	return nil
}

// createGroup stores a new group or partition with its members, all or nothing.
func (s *Store) createGroup(ctx context.Context, g core.GroupRow) error {
	tags, err := json.Marshal(glNonNil(g.Tags))
	if err != nil {
		return fmt.Errorf("encode tags: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.groupWrite(ctx, func() { s.gx.Created(g) }, func(tx *sql.Tx) error {
		var kind string
		err := tx.QueryRowContext(ctx, `SELECT type FROM component_groups WHERE name = ?`, g.Name).Scan(&kind)
		switch {
		case err == nil:
			return problem.Conflictf("%s: %s %q already exists", glKindField(g.Kind), kind, g.Name)
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("create %s %s: %w", g.Kind, g.Name, err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO component_groups (name, type, description, tags, exclusive_group) VALUES (?, ?, ?, ?, ?)`,
			g.Name, g.Kind, g.Description, string(tags), g.Exclusive)
		if err != nil {
			return fmt.Errorf("create %s %s: %w", g.Kind, g.Name, err)
		}
		return insertMembers(ctx, tx, g, g.Members, "members.ids")
	})
}

func glNonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// glLoadGroup reads one group row of the given kind; a missing row is ErrNotFound.
func glLoadGroup(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, kind, name string) (core.GroupRow, error) {
	g := core.GroupRow{Name: name, Kind: kind}
	var tags string
	err := q.QueryRowContext(ctx, `SELECT description, tags, exclusive_group FROM component_groups WHERE name = ? AND type = ?`,
		name, kind).Scan(&g.Description, &tags, &g.Exclusive)
	if errors.Is(err, sql.ErrNoRows) {
		return g, problem.NotFoundf("no %s %s", kind, name)
	}
	if err != nil {
		return g, fmt.Errorf("read %s %s: %w", kind, name, err)
	}
	if err := json.Unmarshal([]byte(tags), &g.Tags); err != nil {
		return g, fmt.Errorf("decode tags of %s %s: %w", kind, name, err)
	}
	if len(g.Tags) == 0 {
		g.Tags = nil
	}
	return g, nil
}

// listGroups returns the groups (or partitions) named in names (all if empty),
// carrying tag if tag is not empty, with their members, ordered by name.
func (s *Store) listGroups(kind string, names []string, tag string) []core.GroupRow {
	out := []core.GroupRow{}
	for _, g := range s.gx.List(kind) {
		if len(names) > 0 && !slices.Contains(names, g.Name) {
			continue
		}
		if tag != "" && !slices.Contains(g.Tags, tag) {
			continue
		}
		out = append(out, *g)
	}
	return out
}

// groupNames returns the names of all groups (or partitions), sorted.
func (s *Store) groupNames(kind string) []string {
	names := []string{}
	for _, g := range s.gx.List(kind) {
		names = append(names, g.Name)
	}
	return names
}
