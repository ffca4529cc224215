package core_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
	"github.com/hmsuite/hms/statemgr/migrations"
)

func tailRow(seq int64, comps int, at time.Time) core.OutboxRow {
	ids := make([]string, comps)
	for i := range ids {
		ids[i] = fmt.Sprintf("x0c0s0b0n%d", i)
	}
	return core.OutboxRow{Seq: seq, Created: at, SCN: hsm.SCN{Components: ids, State: hsm.StateOn, Timestamp: at, Seq: seq}}
}

func seqsOf(rows []core.OutboxRow) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r.Seq
	}
	return out
}

// TestOutboxTail: the tail answers only from its floor on, keeps order,
// honours limit, and trims its oldest rows (raising the floor) past its bounds
// or at expiry.
func TestOutboxTail(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tail := &core.OutboxTail{Floor: 10}
	if _, ok := tail.After(9, 10); ok {
		t.Fatal("tail answered for a cursor below its floor")
	}
	if rows, ok := tail.After(10, 10); !ok || len(rows) != 0 {
		t.Fatalf("empty tail at its floor = %v, %v; want no rows, true", seqsOf(rows), ok)
	}
	for seq := int64(11); seq <= 20; seq++ {
		tail.Append([]core.OutboxRow{tailRow(seq, 1, t0.Add(time.Duration(seq)*time.Second))})
	}
	rows, ok := tail.After(12, 3)
	if !ok {
		t.Fatal("tail refused a cursor above its floor")
	}
	if diff := cmp.Diff([]int64{13, 14, 15}, seqsOf(rows)); diff != "" {
		t.Errorf("after(12, 3) (-want +got):\n%s", diff)
	}
	rows[0].Seq = -1 // callers get their own slice
	if again, _ := tail.After(12, 1); again[0].Seq != 13 {
		t.Errorf("a caller's change reached the tail: %d", again[0].Seq)
	}

	tail.Expire(t0.Add(15 * time.Second)) // rows 11..14 are older
	if _, ok := tail.After(13, 10); ok {
		t.Error("tail answered below the floor raised by expiry")
	}
	if rows, _ := tail.After(14, 100); len(rows) != 6 || rows[0].Seq != 15 {
		t.Errorf("after expiry: %v, want 15..20", seqsOf(rows))
	}

	// Past the row bound, the oldest rows go and the newest stay.
	for seq := int64(21); seq <= 20+core.TailMaxRows; seq++ {
		tail.Append([]core.OutboxRow{tailRow(seq, 1, t0)})
	}
	if len(tail.Rows) > core.TailMaxRows {
		t.Fatalf("tail keeps %d rows, bound is %d", len(tail.Rows), core.TailMaxRows)
	}
	last := int64(20 + core.TailMaxRows)
	if tail.Rows[len(tail.Rows)-1].Seq != last || tail.Floor != tail.Rows[0].Seq-1 {
		t.Errorf("after trimming: floor %d, rows %d..%d; want contiguous up to %d",
			tail.Floor, tail.Rows[0].Seq, tail.Rows[len(tail.Rows)-1].Seq, last)
	}
	// One row over the component bound replaces the rest but is kept itself.
	tail.Append([]core.OutboxRow{tailRow(last+1, core.TailMaxComponents+1, t0)})
	if rows, ok := tail.After(last, 10); !ok || len(rows) != 1 || rows[0].Seq != last+1 {
		t.Errorf("oversized row: got %v, %v", seqsOf(rows), ok)
	}
	if _, ok := tail.After(last-1, 10); ok {
		t.Error("rows before the oversized one are still served from memory")
	}

	// A first row over the bound, alone in the tail, is kept as it is.
	alone := &core.OutboxTail{}
	alone.Append([]core.OutboxRow{tailRow(1, core.TailMaxComponents+1, t0)})
	if rows, ok := alone.After(0, 10); !ok || len(rows) != 1 {
		t.Errorf("a lone oversized row: got %v, %v", seqsOf(rows), ok)
	}
}

// TestOutboxMemoryMatchesDatabase: what consumers read from the in-memory
// Tail right after the writes is what a restarted HSM reads from SQLite.
func TestOutboxMemoryMatchesDatabase(t *testing.T) { pg.EachDB(t, testOutboxMemoryMatchesDatabase) }

func testOutboxMemoryMatchesDatabase(t *testing.T, db testpeer.DB) {
	s, path := hsmtest.NewStoreOn(t, db, core.Config{})
	ctx := t.Context()
	comps := hsmtest.Nodes(4, 1)
	if err := component.NewStore(s).UpsertComponents(ctx, comps, false, nil); err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{hsm.StateOn, hsm.StateReady, hsm.StateOff} {
		if _, err := component.NewStore(s).UpdateState(ctx, hsmtest.IDsOf(comps), component.StateUpdate{State: st}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := component.NewStore(s).UpdateState(ctx, hsmtest.IDsOf(comps[:1]), component.StateUpdate{State: hsm.StateOn, Flag: "Warning"}); err != nil {
		t.Fatal(err)
	}
	mem, ok := s.Tail.After(0, 1000)
	if !ok || len(mem) == 0 {
		t.Fatalf("tail has %d rows (ok %v) after the writes", len(mem), ok)
	}
	s.Close()
	s2, err := core.Open(ctx, path, migrations.FS, core.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, ok := s2.Tail.After(0, 1000); ok {
		t.Fatal("a reopened store serves old rows from memory")
	}
	stored, err := s2.OutboxAfter(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stored, mem); diff != "" {
		t.Errorf("outbox rows, SQLite (-) vs memory (+):\n%s", diff)
	}
}

// TestCommitterSurvivesAPanic: a write that panics inside the group commit
// fails, and the writes after it are committed instead of waiting forever
// for a leader that is gone.
func TestCommitterSurvivesAPanic(t *testing.T) { pg.EachDB(t, testCommitterSurvivesAPanic) }

func testCommitterSurvivesAPanic(t *testing.T, db testpeer.DB) {
	s, _ := hsmtest.NewStoreOn(t, db, core.Config{})
	ctx := t.Context()
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not reach the writer")
			}
		}()
		s.Write(ctx, func(*core.View) (*core.Plan, error) { panic("boom") })
	}()
	done := make(chan error, 1)
	go func() { done <- component.NewStore(s).UpsertComponents(ctx, hsmtest.Nodes(1, 1), false, nil) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second): // a guard against a hang, not a wait
		t.Fatal("the write after the panic never committed")
	}
}

// TestEpochIsPerDatabase: a database keeps the epoch it was created with;
// a new (reset) database gets a later one.
func TestEpochIsPerDatabase(t *testing.T) { pg.EachDB(t, testEpochIsPerDatabase) }

func testEpochIsPerDatabase(t *testing.T, db testpeer.DB) {
	clock := hsmtest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	open := func(path string) int64 {
		t.Helper()
		s, err := core.Open(t.Context(), path, migrations.FS, core.Config{Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		return s.Epoch
	}
	path := db(t)
	first := open(path)
	clock.Add(time.Hour)
	if again := open(path); again != first {
		t.Errorf("reopened database has epoch %d, created with %d", again, first)
	}
	if reset := open(db(t)); reset <= first {
		t.Errorf("a database created later has epoch %d, not after %d", reset, first)
	}
}
