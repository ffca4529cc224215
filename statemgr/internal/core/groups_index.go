package core

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// CompGroups is one component's memberships. Values are immutable once in the
// index: a change replaces the value.
type CompGroups struct {
	Partition string
	Groups    []string // sorted
}

// GroupList returns the labels of the groups g is in (nil for none).
func (g *CompGroups) GroupList() []string {
	if g == nil {
		return nil
	}
	return g.Groups
}

// PartitionName returns g's partition, "" for none.
func (g *CompGroups) PartitionName() string {
	if g == nil {
		return ""
	}
	return g.Partition
}

// partitionList returns g's partition as a list of zero or one names.
func (g *CompGroups) partitionList() []string {
	if g == nil || g.Partition == "" {
		return nil
	}
	return []string{g.Partition}
}

// GroupIndex is the in-memory copy of component_groups and
// component_group_members, loaded at open and updated after each commit that
// changes them, as the components index is. Group writes hold Store.gmu from
// their transaction to their index update, and component deletes drop their
// memberships here after their commit, so the index follows the commits in
// order. Group rows and their member slices are immutable once published.
//
// Lock order: index.mu before groupIndex.mu; no writer holds both.
type GroupIndex struct {
	mu     sync.RWMutex
	groups map[string]*GroupRow   // by name; groups and partitions share names
	of     map[string]*CompGroups // by component ID; absent: in none
	// shared holds one value per distinct membership (see intern).
	shared map[string]*CompGroups
}

func newGroupIndex() *GroupIndex {
	return &GroupIndex{groups: map[string]*GroupRow{}, of: map[string]*CompGroups{}, shared: map[string]*CompGroups{}}
}

// intern returns the shared value equal to g. Components with the same
// memberships (most of a machine) point at one value, so listing 100,000 of
// them reads a few values from cache instead of 100,000 scattered ones.
func (gx *GroupIndex) intern(g *CompGroups) *CompGroups {
	key := g.Partition + "\x00" + strings.Join(g.Groups, "\x00")
	if cur := gx.shared[key]; cur != nil {
		return cur
	}
	gx.shared[key] = g
	return g
}

// loadGroups fills the group index from SQLite.
func (s *Store) loadGroups(ctx context.Context) error {
	rows, err := s.DB.R.QueryContext(ctx, `SELECT name, type, description, tags, exclusive_group FROM component_groups`)
	if err != nil {
		return fmt.Errorf("load groups: %w", err)
	}
	defer rows.Close()
	gx := newGroupIndex()
	for rows.Next() {
		g := &GroupRow{}
		var tags string
		if err := rows.Scan(&g.Name, &g.Kind, &g.Description, &tags, &g.Exclusive); err != nil {
			return fmt.Errorf("load groups: %w", err)
		}
		if err := json.Unmarshal([]byte(tags), &g.Tags); err != nil {
			return fmt.Errorf("decode tags of %s %s: %w", g.Kind, g.Name, err)
		}
		if len(g.Tags) == 0 {
			g.Tags = nil
		}
		gx.groups[g.Name] = g
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load groups: %w", err)
	}
	mrows, err := s.DB.R.QueryContext(ctx, `SELECT group_name, component_id FROM component_group_members ORDER BY group_name, component_id`)
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
			g.Members = append(g.Members, id)
			gx.join(g, id)
		}
	}
	if err := mrows.Err(); err != nil {
		return fmt.Errorf("load group members: %w", err)
	}
	s.Gx = gx
	return nil
}

// join records that id is a member of g in of (not in g.members).
func (gx *GroupIndex) join(g *GroupRow, id string) {
	cur := gx.of[id]
	next := &CompGroups{}
	if cur != nil {
		*next = *cur
	}
	if g.Kind == KindPartition {
		next.Partition = g.Name
	} else {
		i, found := slices.BinarySearch(next.Groups, g.Name)
		if found {
			return
		}
		next.Groups = slices.Insert(slices.Clone(next.Groups), i, g.Name)
	}
	gx.of[id] = gx.intern(next)
}

// leave records that id is no longer a member of g in of.
func (gx *GroupIndex) leave(g *GroupRow, id string) {
	cur := gx.of[id]
	if cur == nil {
		return
	}
	next := &CompGroups{Partition: cur.Partition, Groups: cur.Groups}
	if g.Kind == KindPartition {
		if next.Partition == g.Name {
			next.Partition = ""
		}
	} else if i, found := slices.BinarySearch(cur.Groups, g.Name); found {
		next.Groups = slices.Delete(slices.Clone(cur.Groups), i, i+1)
	}
	if next.Partition == "" && len(next.Groups) == 0 {
		delete(gx.of, id)
		return
	}
	gx.of[id] = gx.intern(next)
}

// Created publishes a committed new group or partition with its members.
func (gx *GroupIndex) Created(g GroupRow) {
	gx.mu.Lock()
	defer gx.mu.Unlock()
	g.Members = slices.Clone(g.Members)
	slices.Sort(g.Members)
	g.Members = slices.Compact(g.Members)
	gx.groups[g.Name] = &g
	for _, id := range g.Members {
		gx.join(&g, id)
	}
}

// Patched publishes a committed description or tags change.
func (gx *GroupIndex) Patched(name string, p hsm.GroupPatch) {
	gx.mu.Lock()
	defer gx.mu.Unlock()
	cur := gx.groups[name]
	if cur == nil {
		return
	}
	next := *cur
	if p.Description != nil {
		next.Description = *p.Description
	}
	if p.Tags != nil {
		next.Tags = slices.Clone(*p.Tags)
		if len(next.Tags) == 0 {
			next.Tags = nil
		}
	}
	gx.groups[name] = &next
}

// Deleted publishes a committed group or partition delete.
func (gx *GroupIndex) Deleted(name string) {
	gx.mu.Lock()
	defer gx.mu.Unlock()
	g := gx.groups[name]
	if g == nil {
		return
	}
	for _, id := range g.Members {
		gx.leave(g, id)
	}
	delete(gx.groups, name)
}

// MemberAdded and memberRemoved publish a committed member change.
func (gx *GroupIndex) MemberAdded(name, id string)   { gx.editMembers(name, id, true) }
func (gx *GroupIndex) MemberRemoved(name, id string) { gx.editMembers(name, id, false) }

func (gx *GroupIndex) editMembers(name, id string, add bool) {
	gx.mu.Lock()
	defer gx.mu.Unlock()
	g := gx.groups[name]
	if g == nil {
		return
	}
	i, found := slices.BinarySearch(g.Members, id)
	if found == add {
		return
	}
	next := *g
	if add {
		next.Members = slices.Insert(slices.Clone(g.Members), i, id)
		gx.join(&next, id)
	} else {
		next.Members = slices.Delete(slices.Clone(g.Members), i, i+1)
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
	s.GroupMu.Lock()
	s.Gx.componentsGone(all, ids)
	s.GroupMu.Unlock()
	s.ResvMu.Lock()
	defer s.ResvMu.Unlock()
	if all {
		s.Rx.droppedAll()
	} else {
		s.Rx.Dropped(ids)
	}
}

// componentsGone drops the memberships of deleted components (the database
// cascades the delete); all means every component is gone.
func (gx *GroupIndex) componentsGone(all bool, ids []string) {
	gx.mu.Lock()
	defer gx.mu.Unlock()
	if all {
		for name, g := range gx.groups {
			next := *g
			next.Members = nil
			gx.groups[name] = &next
		}
		gx.of = map[string]*CompGroups{}
		gx.shared = map[string]*CompGroups{}
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
		for _, name := range append(cg.partitionList(), cg.Groups...) {
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
		next.Members = slices.DeleteFunc(slices.Clone(g.Members), func(id string) bool { return gone[id] })
		gx.groups[name] = &next
	}
}

// View calls fn under the read lock with the lookup of a component's groups.
func (gx *GroupIndex) View(fn func(of func(id string) *CompGroups)) {
	gx.mu.RLock()
	defer gx.mu.RUnlock()
	fn(func(id string) *CompGroups { return gx.of[id] })
}

// Group returns the group or partition name of the given kind, or nil.
func (gx *GroupIndex) Group(kind, name string) *GroupRow {
	gx.mu.RLock()
	defer gx.mu.RUnlock()
	if g := gx.groups[name]; g != nil && g.Kind == kind {
		return g
	}
	return nil
}

// List returns the groups (or partitions) of kind, sorted by name.
func (gx *GroupIndex) List(kind string) []*GroupRow {
	gx.mu.RLock()
	defer gx.mu.RUnlock()
	var out []*GroupRow
	for _, g := range gx.groups {
		if g.Kind == kind {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b *GroupRow) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// InPartition returns the members of ids whose partition is part ("null":
// in no partition).
func (gx *GroupIndex) InPartition(ids []string, part string) []string {
	gx.mu.RLock()
	defer gx.mu.RUnlock()
	out := []string{}
	for _, id := range ids {
		p := ""
		if cg := gx.of[id]; cg != nil {
			p = cg.Partition
		}
		if p == part || (part == nullGroup && p == "") {
			out = append(out, id)
		}
	}
	return out
}

// GroupMemberIDs returns the members of the group or partition name of the
// given kind (none if there is no such group).
func (s *Store) GroupMemberIDs(_ context.Context, name, kind string) ([]string, error) {
	if g := s.Gx.Group(kind, name); g != nil {
		return g.Members, nil
	}
	return nil, nil
}
