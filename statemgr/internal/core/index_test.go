package core

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestIndexPutKeepsOrder: records put in batches (new IDs, replaced ones,
// an ID twice in one batch) are listed by ID, each ID once with its newest
// record, as a full sort of the index would list them.
func TestIndexPutKeepsOrder(t *testing.T) {
	ix := newIndex()
	rng := rand.New(rand.NewPCG(1, 2))
	for batch := range 50 {
		var recs []*Record
		for range rng.IntN(20) + 1 {
			id := fmt.Sprintf("x%dc0s%db0n0", 3000+rng.IntN(5), rng.IntN(40))
			recs = append(recs, &Record{ID: id, State: fmt.Sprintf("batch%d", batch)})
		}
		if batch%7 == 0 { // a new ID twice in one put, and an old one
			fresh := fmt.Sprintf("x2999c0s%db0", batch)
			recs = append(recs, &Record{ID: fresh}, &Record{ID: recs[0].ID, State: "again"}, &Record{ID: fresh, State: "again"})
		}
		ix.put(recs)
		var want []*Record
		for _, r := range ix.ByID {
			want = append(want, r)
		}
		slices.SortFunc(want, func(a, b *Record) int { return strings.Compare(a.ID, b.ID) })
		ix.View(func(all []*Record) {
			if !slices.Equal(all, want) {
				t.Fatalf("batch %d: listed %d records out of order or stale, want %d", batch, len(all), len(want))
			}
		})
	}
	if ix.Len() == 0 {
		t.Fatal("nothing was put")
	}
}
