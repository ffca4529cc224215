package statemgr

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// compGroups is one component's memberships. Values are immutable once in the
// index: a change replaces the value.
type compGroups struct {
	partition string
	groups    []string // sorted
}

// groupList returns the labels of the groups g is in (nil for none).
func (g *compGroups) groupList() []string {
	if g == nil {
		return nil
	}
	return g.groups
}

// partitionName returns g's partition, "" for none.
func (g *compGroups) partitionName() string {
	if g == nil {
		return ""
	}
	return g.partition
}

// partitionList returns g's partition as a list of zero or one names.
func (g *compGroups) partitionList() []string {
	if g == nil || g.partition == "" {
		return nil
	}
	return []string{g.partition}
}

// groupIndex is the in-memory copy of component_groups and
// component_group_members, loaded at open and updated after each commit that
// changes them, as the components index is. Group writes hold Store.gmu from
// their transaction to their index update, and component deletes drop their
// memberships here after their commit, so the index follows the commits in
// order. Group rows and their member slices are immutable once published.
//
// Lock order: index.mu before groupIndex.mu; no writer holds both.
type groupIndex struct {
	mu     sync.RWMutex
	groups map[string]*glGroupRow // by name; groups and partitions share names
	of     map[string]*compGroups // by component ID; absent: in none
	// shared holds one value per distinct membership (see intern).
	shared map[string]*compGroups
}

func newGroupIndex() *groupIndex {
	return &groupIndex{groups: map[string]*glGroupRow{}, of: map[string]*compGroups{}, shared: map[string]*compGroups{}}
}

// intern returns the shared value equal to g. Components with the same
// memberships (most of a machine) point at one value, so listing 100,000 of
// them reads a few values from cache instead of 100,000 scattered ones.
func (gx *groupIndex) intern(g *compGroups) *compGroups {
	key := g.partition + "\x00" + strings.Join(g.groups, "\x00")
	if cur := gx.shared[key]; cur != nil {
		return cur
	}
	gx.shared[key] = g
	return g
}

// loadGroups fills the group index from SQLite.
func (s *Store) loadGroups(ctx context.Context) error {
	rows, err := s.db.R.QueryContext(ctx, `SELECT name, type, description, tags, exclusive_group FROM component_groups`)
	if err != nil {
		return fmt.Errorf("load groups: %w", err)
	}
	defer rows.Close()
	gx := newGroupIndex()
	for rows.Next() {
		g := &glGroupRow{}
		var tags string
		if err := rows.Scan(&g.name, &g.kind, &g.description, &tags, &g.exclusive); err != nil {
			return fmt.Errorf("load groups: %w", err)
		}
		if err := json.Unmarshal([]byte(tags), &g.tags); err != nil {
			return fmt.Errorf("decode tags of %s %s: %w", g.kind, g.name, err)
		}
		if len(g.tags) == 0 {
			g.tags = nil
		}
		gx.groups[g.name] = g
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load groups: %w", err)
	}
	mrows, err := s.db.R.QueryContext(ctx, `SELECT group_name, component_id FROM component_group_members ORDER BY group_name, component_id`)
	if err != nil {
		return fmt.Errorf("load group members: %w", err)
	}
	defer mrows.Close()
	for mrows.Next() {
		var name, id string
		if err := mrows.Scan(&name, &id); err != nil {
			return fmt.Errorf("load group members: %w", err)
		}
		if g := gx.groups[name]; g != nil {
			g.members = append(g.members, id)
			gx.join(g, id)
		}
	}
	if err := mrows.Err(); err != nil {
		return fmt.Errorf("load group members: %w", err)
	}
	s.gx = gx
	return nil
}

// join records that id is a member of g in of (not in g.members).
func (gx *groupIndex) join(g *glGroupRow, id string) {
	cur := gx.of[id]
	next := &compGroups{}
	if cur != nil {
		*next = *cur
	}
	if g.kind == kindPartition {
		next.partition = g.name
	} else {
		i, found := slices.BinarySearch(next.groups, g.name)
		if found {
			return
		}
		next.groups = slices.Insert(slices.Clone(next.groups), i, g.name)
	}
	gx.of[id] = gx.intern(next)
}

// leave records that id is no longer a member of g in of.
func (gx *groupIndex) leave(g *glGroupRow, id string) {
	cur := gx.of[id]
	if cur == nil {
		return
	}
	next := &compGroups{partition: cur.partition, groups: cur.groups}
	if g.kind == kindPartition {
		if next.partition == g.name {
			next.partition = ""
		}
	} else if i, found := slices.BinarySearch(cur.groups, g.name); found {
		next.groups = slices.Delete(slices.Clone(cur.groups), i, i+1)
	}
	if next.partition == "" && len(next.groups) == 0 {
		delete(gx.of, id)
		return
	}
	gx.of[id] = gx.intern(next)
}

// created publishes a committed new group or partition with its members.
func (gx *groupIndex) created(g glGroupRow) {
	gx.mu.Lock()
	defer gx.mu.Unlock()
	g.members = slices.Clone(g.members)
	slices.Sort(g.members)
	g.members = slices.Compact(g.members)
	gx.groups[g.name] = &g
	for _, id := range g.members {
		gx.join(&g, id)
	}
}

// patched publishes a committed description or tags change.
func (gx *groupIndex) patched(name string, p hsm.GroupPatch) {
	gx.mu.Lock()
	defer gx.mu.Unlock()
	cur := gx.groups[name]
	if cur == nil {
		return
	}
	next := *cur
	if p.Description != nil {
		next.description = *p.Description
	}
	if p.Tags != nil {
		next.tags = slices.Clone(*p.Tags)
		if len(next.tags) == 0 {
			next.tags = nil
		}
	}
	gx.groups[name] = &next
}

// deleted publishes a committed group or partition delete.
func (gx *groupIndex) deleted(name string) {
	gx.mu.Lock()
	defer gx.mu.Unlock()
	g := gx.groups[name]
	if g == nil {
		return
	}
	for _, id := range g.members {
		gx.leave(g, id)
	}
	delete(gx.groups, name)
}

// memberAdded and memberRemoved publish a committed member change.
func (gx *groupIndex) memberAdded(name, id string)   { gx.editMembers(name, id, true) }
func (gx *groupIndex) memberRemoved(name, id string) { gx.editMembers(name, id, false) }

func (gx *groupIndex) editMembers(name, id string, add bool) {
	gx.mu.Lock()
	defer gx.mu.Unlock()
	g := gx.groups[name]
	if g == nil {
		return
	}
	i, found := slices.BinarySearch(g.members, id)
	if found == add {
		return
	}
	next := *g
	if add {
		next.members = slices.Insert(slices.Clone(g.members), i, id)
		gx.join(&next, id)
	} else {
		next.members = slices.Delete(slices.Clone(g.members), i, i+1)
		gx.leave(&next, id)
	}
	gx.groups[name] = &next
}

// componentsGone brings the in-memory copies of what the database deletes
// with a component (its memberships and reservation) up to date after the
// delete committed. It never holds gmu or resvMu while waiting for the
// committer, and their holders never wait for it, so it cannot deadlock with
// them (lockOp, which does call the committer, holds only lockMu then).
func (s *Store) componentsGone(all bool, ids []string) {
	s.gmu.Lock()
	s.gx.componentsGone(all, ids)
	s.gmu.Unlock()
	s.resvMu.Lock()
	defer s.resvMu.Unlock()
	if all {
		s.rx.droppedAll()
	} else {
		s.rx.dropped(ids)
	}
}

// componentsGone drops the memberships of deleted components (the database
// cascades the delete); all means every component is gone.
func (gx *groupIndex) componentsGone(all bool, ids []string) {
	gx.mu.Lock()
	defer gx.mu.Unlock()
	if all {
		for name, g := range gx.groups {
			next := *g
			next.members = nil
			gx.groups[name] = &next
		}
		gx.of = map[string]*compGroups{}
		gx.shared = map[string]*compGroups{}
		return
	}
	gone := map[string]bool{}
	touched := map[string]bool{} // groups that lose members
	for _, id := range ids {
		cg := gx.of[id]
		if cg == nil {
			continue
		}
		gone[id] = true
		for _, name := range append(cg.partitionList(), cg.groups...) {
			touched[name] = true
		}
		delete(gx.of, id)
	}
	for name := range touched {
		g := gx.groups[name]
		if g == nil {
			continue
		}
		next := *g
		next.members = slices.DeleteFunc(slices.Clone(g.members), func(id string) bool { return gone[id] })
		gx.groups[name] = &next
	}
}

// view calls fn under the read lock with the lookup of a component's groups.
func (gx *groupIndex) view(fn func(of func(id string) *compGroups)) {
	gx.mu.RLock()
	defer gx.mu.RUnlock()
	fn(func(id string) *compGroups { return gx.of[id] })
}

// group returns the group or partition name of the given kind, or nil.
func (gx *groupIndex) group(kind, name string) *glGroupRow {
	gx.mu.RLock()
	defer gx.mu.RUnlock()
	if g := gx.groups[name]; g != nil && g.kind == kind {
		return g
	}
	return nil
}

// list returns the groups (or partitions) of kind, sorted by name.
func (gx *groupIndex) list(kind string) []*glGroupRow {
	gx.mu.RLock()
	defer gx.mu.RUnlock()
	var out []*glGroupRow
	for _, g := range gx.groups {
		if g.kind == kind {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b *glGroupRow) int { return strings.Compare(a.name, b.name) })
	return out
}

// inPartition returns the members of ids whose partition is part ("null":
// in no partition).
func (gx *groupIndex) inPartition(ids []string, part string) []string {
	gx.mu.RLock()
	defer gx.mu.RUnlock()
	out := []string{}
	for _, id := range ids {
		p := ""
		if cg := gx.of[id]; cg != nil {
			p = cg.partition
		}
		if p == part || (part == nullGroup && p == "") {
			out = append(out, id)
		}
	}
	return out
}

// groupMemberIDs returns the members of the group or partition name of the
// given kind (none if there is no such group).
func (s *Store) groupMemberIDs(_ context.Context, name, kind string) ([]string, error) {
	if g := s.gx.group(kind, name); g != nil {
		return g.members, nil
	}
	return nil, nil
}
