package sqldb

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// queued reports how many writes wait in g's queue.
func (g *Group[T]) queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// led reports whether a writer leads.
func (g *Group[T]) led() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.leading
}

// TestGroupSharesRounds holds the first round open until the other
// writers are queued: they commit together in the next round, bounded by
// most, and each gets its own item's error.
func TestGroupSharesRounds(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var rounds [][]int
	g := NewGroup(4, func(_ context.Context, items []int) []error {
		if items[0] == 0 {
			<-release
		}
		mu.Lock()
		rounds = append(rounds, slices.Clone(items))
		mu.Unlock()
		errs := make([]error, len(items))
		for i, it := range items {
			if it%3 == 0 {
				errs[i] = fmt.Errorf("item %d refused", it)
			}
		}
		return errs
	})
	errs := make([]error, 7)
	var wg sync.WaitGroup
	do := func(i int) {
		defer wg.Done()
		errs[i] = g.Do(t.Context(), i)
	}
	wg.Add(1)
	go do(0)
	for g.queued() != 0 || !g.led() {
		runtime.Gosched() // the leader has taken its round
	}
	for i := 1; i < 7; i++ {
		wg.Add(1)
		go do(i)
		for g.queued() != i {
			runtime.Gosched()
		}
	}
	close(release)
	wg.Wait()
	if want := [][]int{{0}, {1, 2, 3, 4}, {5, 6}}; fmt.Sprint(rounds) != fmt.Sprint(want) {
		t.Errorf("rounds %v, want %v", rounds, want)
	}
	for i, err := range errs {
		if (err != nil) != (i%3 == 0) {
			t.Errorf("item %d: error %v", i, err)
		}
	}
	if g.led() || g.queued() != 0 {
		t.Error("the lead was not given up")
	}
}

// TestGroupPanicReleasesWriters: a panicking round fails its writers and
// leaves the group usable.
func TestGroupPanicReleasesWriters(t *testing.T) {
	g := NewGroup(0, func(_ context.Context, items []string) []error {
		if items[0] == "boom" {
			panic("boom")
		}
		return make([]error, len(items))
	})
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not reach the leader")
			}
		}()
		_ = g.Do(t.Context(), "boom")
	}()
	if err := g.Do(t.Context(), "ok"); err != nil {
		t.Fatalf("after a panic: %v", err)
	}
}

// TestGroupConcurrentWriters: every writer gets its own result, whatever
// the rounds.
func TestGroupConcurrentWriters(t *testing.T) {
	errOdd := errors.New("odd")
	g := NewGroup(8, func(_ context.Context, items []int) []error {
		errs := make([]error, len(items))
		for i, it := range items {
			if it%2 == 1 {
				errs[i] = errOdd
			}
		}
		return errs
	})
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := g.Do(t.Context(), i); errors.Is(err, errOdd) != (i%2 == 1) {
				t.Errorf("item %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
}
