package core

import (
	"slices"
	"strings"
	"sync"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// Record is the in-memory form of a component row. Records are immutable once
// published in the index: a write builds new records and swaps them in after
// its transaction commits, so a reader holding a *record never sees it change.
type Record struct {
	ID, Type, State, Flag string
	Enabled               bool
	SoftwareStatus        string
	Role, SubRole         string
	NID                   int
	HasNID                bool
	Subtype, NetType      string
	Arch, Class           string
	ReservationDisabled   bool
	Locked                bool
	// NIDChanged marks a record whose NID differs from the one it replaces.
	NIDChanged bool
}

// Component returns the wire form of r.
func (r *Record) Component() hsm.Component {
	c := hsm.Component{ID: r.ID, Type: r.Type, State: r.State, Flag: r.Flag, SoftwareStatus: r.SoftwareStatus,
		Role: r.Role, SubRole: r.SubRole, Subtype: r.Subtype, NetType: r.NetType, Arch: r.Arch, Class: r.Class,
		ReservationDisabled: r.ReservationDisabled, Locked: r.Locked}
	en := r.Enabled
	c.Enabled = &en
	if r.HasNID {
		n := r.NID
		c.NID = &n
	}
	return c
}

// Index is the in-memory copy of the components table: by ID, by NID, and an
// ID-sorted slice for listing. Readers take mu.RLock; the one writer at a time
// (Store.wmu) takes mu.Lock only to swap in committed records.
type Index struct {
	mu     sync.RWMutex
	ByID   map[string]*Record
	byNID  map[int]*Record
	sorted []*Record // by ID
	// version counts changes; full caches the encoded unfiltered listing of
	// version fullAt.
	version, fullAt uint64
	full            []byte
}

func newIndex() *Index {
	return &Index{ByID: map[string]*Record{}, byNID: map[int]*Record{}}
}

// Get returns the record for id (normalised), or nil.
func (ix *Index) Get(id string) *Record {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.ByID[id]
}

// ByNID returns the record holding nid, or nil.
func (ix *Index) ByNID(nid int) *Record {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.byNID[nid]
}

// put swaps in committed records (new or replacing ones with the same ID).
// New IDs are sorted among themselves and merged into the sorted slice: a
// burst of discoveries, each adding a BMC and its node, re-sorted every
// component once per write (an eighth of HSM's CPU in a 3,000-node boot
// storm).
func (ix *Index) put(recs []*Record) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.version++
	var added []string
	for _, r := range recs {
		old := ix.ByID[r.ID]
		if old != nil && old.HasNID && ix.byNID[old.NID] == old {
			delete(ix.byNID, old.NID)
		}
		ix.ByID[r.ID] = r
		if r.HasNID {
			ix.byNID[r.NID] = r
		}
		if old == nil {
			added = append(added, r.ID)
			continue
		}
		if i, ok := slices.BinarySearchFunc(ix.sorted, r.ID, cmpRecordID); ok {
			ix.sorted[i] = r // not found: added earlier in this put
		}
	}
	if len(added) > 0 {
		ix.mergeLocked(added)
	}
}

// mergeLocked puts the records of ids (distinct, absent from ix.sorted)
// into it in order.
func (ix *Index) mergeLocked(ids []string) {
	slices.Sort(ids)
	out := make([]*Record, 0, len(ix.sorted)+len(ids))
	old := ix.sorted
	for _, id := range ids {
		i, _ := slices.BinarySearchFunc(old, id, cmpRecordID)
		out = append(append(out, old[:i]...), ix.ByID[id])
		old = old[i:]
	}
	ix.sorted = append(out, old...)
}

// remove drops the records with the given IDs.
func (ix *Index) remove(ids []string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.version++
	for _, id := range ids {
		if old := ix.ByID[id]; old != nil {
			if old.HasNID && ix.byNID[old.NID] == old {
				delete(ix.byNID, old.NID)
			}
			delete(ix.ByID, id)
		}
	}
	ix.sorted = nil
	ix.sortLocked()
}

// reset replaces the whole index (used at load and after DELETE all).
func (ix *Index) reset(recs []*Record) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.version++
	ix.ByID = make(map[string]*Record, len(recs))
	ix.byNID = make(map[int]*Record, len(recs))
	for _, r := range recs {
		ix.ByID[r.ID] = r
		if r.HasNID {
			ix.byNID[r.NID] = r
		}
	}
	ix.sorted = nil
	ix.sortLocked()
}

func (ix *Index) sortLocked() {
	s := make([]*Record, 0, len(ix.ByID))
	for _, r := range ix.ByID {
		s = append(s, r)
	}
	slices.SortFunc(s, func(a, b *Record) int { return strings.Compare(a.ID, b.ID) })
	ix.sorted = s
}

func cmpRecordID(r *Record, id string) int { return strings.Compare(r.ID, id) }

// View calls fn with the sorted records under the read lock; fn must not keep
// the slice.
func (ix *Index) View(fn func(all []*Record)) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	fn(ix.sorted)
}

// Len returns the number of components.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.ByID)
}

// FullList returns the encoded unfiltered listing, from the cache when no
// write happened since it was built. Callers must not modify the result.
func (ix *Index) FullList() []byte {
	ix.mu.RLock()
	if ix.full != nil && ix.fullAt == ix.version {
		b := ix.full
		ix.mu.RUnlock()
		return b
	}
	var all Filter
	b := EncodeList(ix.sorted, &all)
	v := ix.version
	ix.mu.RUnlock()
	ix.mu.Lock()
	if v == ix.version {
		ix.full, ix.fullAt = b, v
	}
	ix.mu.Unlock()
	return b
}
