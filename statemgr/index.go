package statemgr

import (
	"slices"
	"strings"
	"sync"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// record is the in-memory form of a component row. Records are immutable once
// published in the index: a write builds new records and swaps them in after
// its transaction commits, so a reader holding a *record never sees it change.
type record struct {
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
	// nidChanged marks a record whose NID differs from the one it replaces.
	nidChanged bool
}

// component returns the wire form of r.
func (r *record) component() hsm.Component {
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

// index is the in-memory copy of the components table: by ID, by NID, and an
// ID-sorted slice for listing. Readers take mu.RLock; the one writer at a time
// (Store.wmu) takes mu.Lock only to swap in committed records.
type index struct {
	mu     sync.RWMutex
	byID   map[string]*record
	byNID  map[int]*record
	sorted []*record // by ID; nil when it must be rebuilt
	// version counts changes; full caches the encoded unfiltered listing of
	// version fullAt.
	version, fullAt uint64
	full            []byte
}

func newIndex() *index {
	return &index{byID: map[string]*record{}, byNID: map[int]*record{}}
}

// get returns the record for id (normalised), or nil.
func (ix *index) get(id string) *record {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.byID[id]
}

// byNIDGet returns the record holding nid, or nil.
func (ix *index) byNIDGet(nid int) *record {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.byNID[nid]
}

// put swaps in committed records (new or replacing ones with the same ID).
func (ix *index) put(recs []*record) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.version++
	grew := false
	for _, r := range recs {
		old := ix.byID[r.ID]
		if old != nil && old.HasNID && ix.byNID[old.NID] == old {
			delete(ix.byNID, old.NID)
		}
		ix.byID[r.ID] = r
		if r.HasNID {
			ix.byNID[r.NID] = r
		}
		if old == nil {
			grew = true
			continue
		}
		if ix.sorted != nil && !grew {
			if i, ok := slices.BinarySearchFunc(ix.sorted, r.ID, cmpRecordID); ok {
				ix.sorted[i] = r
			}
		}
	}
	if grew {
		ix.sorted = nil
		ix.sortLocked()
	}
}

// remove drops the records with the given IDs.
func (ix *index) remove(ids []string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.version++
	for _, id := range ids {
		if old := ix.byID[id]; old != nil {
			if old.HasNID && ix.byNID[old.NID] == old {
				delete(ix.byNID, old.NID)
			}
			delete(ix.byID, id)
		}
	}
	ix.sorted = nil
	ix.sortLocked()
}

// reset replaces the whole index (used at load and after DELETE all).
func (ix *index) reset(recs []*record) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.version++
	ix.byID = make(map[string]*record, len(recs))
	ix.byNID = make(map[int]*record, len(recs))
	for _, r := range recs {
		ix.byID[r.ID] = r
		if r.HasNID {
			ix.byNID[r.NID] = r
		}
	}
	ix.sorted = nil
	ix.sortLocked()
}

func (ix *index) sortLocked() {
	s := make([]*record, 0, len(ix.byID))
	for _, r := range ix.byID {
		s = append(s, r)
	}
	slices.SortFunc(s, func(a, b *record) int { return strings.Compare(a.ID, b.ID) })
	ix.sorted = s
}

func cmpRecordID(r *record, id string) int { return strings.Compare(r.ID, id) }

// view calls fn with the sorted records under the read lock; fn must not keep
// the slice.
func (ix *index) view(fn func(all []*record)) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	fn(ix.sorted)
}

// len returns the number of components.
func (ix *index) len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.byID)
}

// fullList returns the encoded unfiltered listing, from the cache when no
// write happened since it was built. Callers must not modify the result.
func (ix *index) fullList() []byte {
	ix.mu.RLock()
	if ix.full != nil && ix.fullAt == ix.version {
		b := ix.full
		ix.mu.RUnlock()
		return b
	}
	var all Filter
	b := encodeList(ix.sorted, &all)
	v := ix.version
	ix.mu.RUnlock()
	ix.mu.Lock()
	if v == ix.version {
		ix.full, ix.fullAt = b, v
	}
	ix.mu.Unlock()
	return b
}
