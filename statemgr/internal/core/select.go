package core

import (
	"slices"
	"strings"
)

// A component query that names its components (id=, ComponentIDs, NIDs,
// NID ranges, a parent xname) is answered from the index's maps, so its
// cost follows the components named, not the components HSM holds: in a
// boot storm every service asks HSM about a few nodes at a time, and each
// such query walked all 100,000 records.

// ViewOf calls fn, under the read lock, with the records f may select in ID
// order: those f names when it names them by ID, NID or parent xname, else
// every record. fn must still Match each record (and must not keep the
// slice).
func (ix *Index) ViewOf(f *Filter, fn func(recs []*Record)) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	fn(ix.candidatesLocked(f))
}

// candidatesLocked returns a superset, in ID order, of the records f
// selects: the cheapest of f's ID list, its NIDs and its parent's subtree,
// or every record.
func (ix *Index) candidatesLocked(f *Filter) []*Record {
	if len(f.ids.pos) > 0 {
		return ix.byIDsLocked(f.ids.pos)
	}
	if out, ok := ix.byNIDsLocked(f); ok {
		return out
	}
	if f.Under != "" && !isAllParent(f.Under) {
		return ix.subtreeLocked(f.Under)
	}
	return ix.sorted
}

// byIDsLocked returns the records of ids that exist, in ID order, once each.
func (ix *Index) byIDsLocked(ids []string) []*Record {
	out := make([]*Record, 0, min(len(ids), len(ix.ByID)))
	for _, id := range ids {
		if r := ix.ByID[id]; r != nil {
			out = append(out, r)
		}
	}
	return sortRecords(out)
}

// byNIDsLocked returns the records holding f's NIDs and the NIDs of its
// ranges, in ID order, when they are fewer to look up than the records
// are to scan (ok false: scan).
func (ix *Index) byNIDsLocked(f *Filter) (out []*Record, ok bool) {
	if !f.HasNID {
		return nil, false
	}
	most := uint64(len(ix.sorted))
	n := uint64(len(f.nids))
	for _, r := range f.NIDRanges {
		if r[1] >= r[0] {
			// span+1 NIDs; span itself is exact, span+1 wraps to 0 for the
			// range of every int (review-5: that passed the check and
			// looped 2^64 times under the read lock), so compare span.
			span := uint64(r[1]) - uint64(r[0])
			if span >= most {
				return nil, false
			}
			n += span + 1
		}
		if n > most {
			return nil, false
		}
	}
	if n > most {
		return nil, false
	}
	for _, nid := range f.nids {
		if r := ix.byNID[nid]; r != nil {
			out = append(out, r)
		}
	}
	for _, rg := range f.NIDRanges {
		if rg[1] < rg[0] {
			continue
		}
		// Stop at rg[1] itself: nid <= rg[1] never fails when rg[1] is
		// the largest int (nid++ wraps).
		for nid := rg[0]; ; nid++ {
			if r := ix.byNID[nid]; r != nil {
				out = append(out, r)
			}
			if nid == rg[1] {
				break
			}
		}
	}
	return sortRecords(out), true
}

// subtreeLocked returns parent and its descendants: the records whose ID
// starts with parent, a contiguous run of the sorted slice.
func (ix *Index) subtreeLocked(parent string) []*Record {
	lo, _ := slices.BinarySearchFunc(ix.sorted, parent, cmpRecordID)
	hi := lo
	for hi < len(ix.sorted) && strings.HasPrefix(ix.sorted[hi].ID, parent) {
		hi++
	}
	return ix.sorted[lo:hi:hi]
}

// sortRecords sorts recs by ID and drops repeats.
func sortRecords(recs []*Record) []*Record {
	slices.SortFunc(recs, func(a, b *Record) int { return strings.Compare(a.ID, b.ID) })
	return slices.CompactFunc(recs, func(a, b *Record) bool { return a == b })
}
