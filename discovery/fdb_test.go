package discovery

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hmsuite/hms/internal/problem"
)

// slowWalker counts walks; each takes a second of the bubble's clock and
// returns the table current when it started.
type slowWalker struct {
	mu             sync.Mutex
	walks          int
	inFlight, peak int // walks under way, and the most at once
	table          Table
}

func (w *slowWalker) Walk(ctx context.Context, sw Switch) (Table, WalkStats, error) {
	w.mu.Lock()
	w.walks++
	w.inFlight++
	w.peak = max(w.peak, w.inFlight)
	t := w.table
	w.mu.Unlock()
	time.Sleep(time.Second)
	w.mu.Lock()
	w.inFlight--
	w.mu.Unlock()
	return t, WalkStats{Entries: len(t)}, nil
}

func (w *slowWalker) count() int { w.mu.Lock(); defer w.mu.Unlock(); return w.walks }

// TestFDBCoalesces: questions asked while a walk runs share one next walk;
// an answer read after the question is reused until the TTL.
func TestFDBCoalesces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &slowWalker{table: Table{"aa:00:00:00:00:01": {"p1"}}}
		f := NewFDB(w, time.Minute, 0, 4, nil, nil)
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

// TestFDBTablesWalksSwitchesAtOnce: one question about several switches
// starts all their walks before it waits for any (they run together, not
// one after the other), and a second question asked meanwhile shares them.
func TestFDBTablesWalksSwitchesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &slowWalker{table: Table{"aa:00:00:00:00:01": {"p1"}}}
		f := NewFDB(w, time.Minute, 0, 8, nil, nil)
		sws := []Switch{{Xname: "x3000c0w1"}, {Xname: "x3000c0w2"}, {Xname: "x3000c0w3"}, {Xname: "x3000c0w4"}}
		asked := time.Now()
		done := make(chan struct{})
		go func() {
			defer close(done)
			if _, errs := f.Tables(t.Context(), sws, asked); errs[0] != nil {
				t.Error(errs[0])
			}
		}()
		ts, errs := f.Tables(t.Context(), sws, asked)
		<-done
		for i := range sws {
			if errs[i] != nil || len(ts[i]["aa:00:00:00:00:01"]) != 1 {
				t.Fatalf("switch %d: table %v, err %v", i, ts[i], errs[i])
			}
		}
		if w.peak != len(sws) {
			t.Errorf("at most %d walks ran at once, want all %d", w.peak, len(sws))
		}
		if n := w.count(); n != len(sws) {
			t.Errorf("%d walks for two questions about %d switches, want %d", n, len(sws), len(sws))
		}
	})
}

// TestFDBMinInterval: questions arriving all the time (a lease every 100
// ms, each asking after the last walk began) walk a switch once per
// minimum interval, not back to back, and every one is answered.
func TestFDBMinInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &slowWalker{table: Table{"aa:00:00:00:00:01": {"p1"}}}
		f := NewFDB(w, time.Minute, 10*time.Second, 8, nil, nil)
		sw := Switch{Xname: "x3000c0w14"}
		var wg sync.WaitGroup
		for range 300 { // 30 s of leases
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := f.Table(t.Context(), sw, time.Now()); err != nil {
					t.Error(err)
				}
			}()
			time.Sleep(100 * time.Millisecond)
		}
		wg.Wait()
		// Walks begin at 0, 10, 20 and 30 s; back to back (a second each)
		// they would have been 31.
		if n := w.count(); n != 4 {
			t.Errorf("%d walks for 30 s of questions 10 s apart at least, want 4", n)
		}
	})
}

// TestFDBWaitBounded: the wait between two walks of a switch is at most
// the minimum interval, even when the injected clock went backwards (it
// once waited for as long as the clock had gone back), and Stop ends it:
// the walk that had not begun fails as unavailable.
func TestFDBWaitBounded(t *testing.T) {
	const gap = 10 * time.Second
	synctest.Test(t, func(t *testing.T) {
		w := &slowWalker{table: Table{"aa:00:00:00:00:01": {"p1"}}}
		var mu sync.Mutex
		base := time.Now()
		clock := base
		now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
		f := NewFDB(w, time.Minute, gap, 8, now, nil)
		sw := Switch{Xname: "x3000c0w14"}
		if _, err := f.Table(t.Context(), sw, base); err != nil { // walk 1, at base
			t.Fatal(err)
		}
		mu.Lock()
		clock = base.Add(-time.Hour)
		mu.Unlock()
		start := time.Now()
		if _, err := f.Table(t.Context(), sw, base.Add(time.Nanosecond)); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > gap+time.Second {
			t.Errorf("second walk answered after %v, want the gap (%v) and the walk (1s) at most", took, gap)
		}

		// Walk 2 began at base-1h by the clock, which stays there: a third
		// waits a full gap.
		start = time.Now()
		errc := make(chan error, 1)
		go func() {
			_, err := f.Table(t.Context(), sw, base)
			errc <- err
		}()
		synctest.Wait()
		f.Stop()
		if err := <-errc; !errors.Is(err, problem.ErrUnavailable) {
			t.Errorf("walk waiting at Stop: %v, want unavailable", err)
		}
		if took := time.Since(start); took != 0 {
			t.Errorf("Stop ended the wait after %v, want at once", took)
		}
		if n := w.count(); n != 2 {
			t.Errorf("%d walks, want 2 (none after Stop)", n)
		}
	})
}

// TestFDBStopEndsSlotWaits: Stop also ends the wait of a walk queued for a
// concurrency slot (review-4: it began after Stop, once the walk holding
// the slot was done); its question fails as unavailable.
func TestFDBStopEndsSlotWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &slowWalker{}
		f := NewFDB(w, time.Minute, -1, 1, nil, nil) // one switch walked at a time
		var errs []error
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, errs = f.Tables(t.Context(), []Switch{{Xname: "x3000c0w14"}, {Xname: "x3000c0w15"}}, time.Now())
		}()
		synctest.Wait() // the first walk under way, the second waiting for the slot
		f.Stop()
		<-done
		if n := w.count(); n != 1 {
			t.Errorf("%d walks, want 1: a walk queued for a slot at Stop began after it", n)
		}
		// Either switch may have taken the slot first.
		if (errs[0] == nil) == (errs[1] == nil) || !errors.Is(errors.Join(errs...), problem.ErrUnavailable) {
			t.Errorf("errors %v, want the walk under way to end well and the queued one unavailable", errs)
		}
	})
}
