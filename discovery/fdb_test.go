package discovery

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// slowWalker counts walks; each takes a second of the bubble's clock and
// returns the table current when it started.
type slowWalker struct {
	mu    sync.Mutex
	walks int
	table Table
}

func (w *slowWalker) Walk(ctx context.Context, sw Switch) (Table, WalkStats, error) {
	w.mu.Lock()
	w.walks++
	t := w.table
	w.mu.Unlock()
	time.Sleep(time.Second)
	return t, WalkStats{Entries: len(t)}, nil
}

func (w *slowWalker) count() int { w.mu.Lock(); defer w.mu.Unlock(); return w.walks }

// TestFDBCoalesces: questions asked while a walk runs share one next walk;
// an answer read after the question is reused until the TTL.
func TestFDBCoalesces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &slowWalker{table: Table{"aa:00:00:00:00:01": {"p1"}}}
		f := NewFDB(w, time.Minute, 4, nil, nil)
		sw := Switch{Xname: "x3000c0w14"}
		var wg sync.WaitGroup
		ask := func() {
			defer wg.Done()
			if _, err := f.Table(t.Context(), sw, time.Now()); err != nil {
				t.Error(err)
			}
		}
		wg.Add(1)
		go ask() // starts walk 1
		synctest.Wait()
		time.Sleep(time.Millisecond)
		for range 100 { // asked after walk 1 started: all wait for walk 2
			wg.Add(1)
			go ask()
		}
		wg.Wait()
		if n := w.count(); n != 2 {
			t.Fatalf("%d walks for 101 questions, want 2", n)
		}
		since := time.Now().Add(-time.Second)
		if _, err := f.Table(t.Context(), sw, since); err != nil || w.count() != 2 {
			t.Fatalf("a cached table newer than the question was walked again (%d walks)", w.count())
		}
		time.Sleep(2 * time.Minute)
		if _, err := f.Table(t.Context(), sw, since); err != nil || w.count() != 3 {
			t.Fatalf("a table older than the TTL was used (%d walks)", w.count())
		}
	})
}
