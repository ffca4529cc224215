package nodes

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
)

// TestInBulk: items go in chunks of bulkChunk; a chunk whose bulk request
// fails (a service without the extension, or one bad item) is sent again
// one item at a time.
func TestInBulk(t *testing.T) {
	items := make([]int, 2*bulkChunk+3)
	for i := range items {
		items[i] = i
	}
	var mu sync.Mutex
	var chunks []int // sizes of the bulk requests
	var ones []int
	inBulk(t.Context(), 4, items, func(_ context.Context, c []int) error {
		mu.Lock()
		defer mu.Unlock()
		chunks = append(chunks, len(c))
		if slices.Contains(c, bulkChunk+7) {
			return errors.New("one bad item")
		}
		return nil
	}, func(i int) {
		mu.Lock()
		defer mu.Unlock()
		ones = append(ones, i)
	})
	if want := []int{bulkChunk, bulkChunk, 3}; !slices.Equal(chunks, want) {
		t.Errorf("bulk requests of %v, want %v", chunks, want)
	}
	slices.Sort(ones)
	if len(ones) != bulkChunk || ones[0] != bulkChunk || ones[len(ones)-1] != 2*bulkChunk-1 {
		t.Errorf("sent one at a time: %d items (%v...), want the failed chunk's %d", len(ones), ones[:min(3, len(ones))], bulkChunk)
	}
}
