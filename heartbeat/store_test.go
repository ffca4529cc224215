package heartbeat

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hmsuite/hms/internal/testpeer"
)

// TestStorePendingAcks: a receiver's confirmation clears the pending mark
// whether it arrives after the transition was written or before (the
// notifier can be faster than the store writer), and only for that
// transition, not for a later one of the same node.
func TestStorePendingAcks(t *testing.T) { pg.EachDB(t, testStorePendingAcks) }

func testStorePendingAcks(t *testing.T, db testpeer.DB) {
	ctx := t.Context()
	s, err := OpenStore(ctx, db(t), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetReceivers("hsm", "bus")
	t0 := time.UnixMilli(1_700_000_000_000)
	first := Change{XName: "x0c0s0b0n0", From: Unknown, To: Alive, LastHB: t0, At: t0}
	early := Change{XName: "x0c0s0b0n1", From: Unknown, To: Alive, LastHB: t0, At: t0}

	s.Ack(ctx, "hsm", []Change{early}) // before Save
	s.pendingFor([]Change{early})      // a Save transaction that then fails must not use the confirmation up
	if err := s.Save(ctx, []Change{first, early}); err != nil {
		t.Fatal(err)
	}
	s.Ack(ctx, "bus", []Change{first}) // after Save
	pending := func() map[string][2]bool {
		recs, err := s.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][2]bool{}
		for _, r := range recs {
			out[r.XName] = [2]bool{r.PendingHSM, r.PendingBus}
		}
		return out
	}
	got := pending()
	if got["x0c0s0b0n0"] != [2]bool{true, false} || got["x0c0s0b0n1"] != [2]bool{false, true} {
		t.Fatalf("pending (hsm, bus) = %v", got)
	}

	// n1 dies later: the old confirmation does not cover the new transition.
	later := Change{XName: "x0c0s0b0n1", From: Alive, To: Dead, LastHB: t0, At: t0.Add(time.Minute)}
	if err := s.Save(ctx, []Change{later}); err != nil {
		t.Fatal(err)
	}
	if got := pending()["x0c0s0b0n1"]; got != [2]bool{true, true} {
		t.Fatalf("later transition pending (hsm, bus) = %v, want both", got)
	}
	recs, _ := s.Load(ctx)
	for _, r := range recs {
		if r.XName == "x0c0s0b0n1" && (r.Prev != Alive || r.State != Dead) {
			t.Errorf("stored transition %v -> %v, want alive -> dead", r.Prev, r.State)
		}
	}
	if len(s.acked) != 0 {
		t.Errorf("confirmations kept after use: %v", s.acked)
	}
}

// TestStoreRestart: what the store saved (the last transition of each
// node, with its pending marks, the tracker's alive time and the PATCHed
// parameters) is what a store opened afresh on the database loads.
func TestStoreRestart(t *testing.T) { pg.EachDB(t, testStoreRestart) }

func testStoreRestart(t *testing.T, db testpeer.DB) {
	ctx := t.Context()
	path := db(t)
	s, err := OpenStore(ctx, path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.SetReceivers("hsm")
	t0 := time.UnixMilli(1_700_000_000_000)
	changes := []Change{
		{XName: "x0c0s0b0n0", From: Unknown, To: Alive, LastHB: t0, At: t0},
		{XName: "x0c0s0b0n1", From: Alive, To: Warned, LastHB: t0, At: t0.Add(time.Second)},
		{XName: "x0c0s0b0n0", From: Alive, To: Dead, LastHB: t0, At: t0.Add(time.Minute)},
	}
	if err := s.Save(ctx, changes); err != nil {
		t.Fatal(err)
	}
	s.Ack(ctx, "hsm", changes[1:2])
	alive := t0.Add(2 * time.Minute)
	if err := s.MarkAlive(ctx, alive); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveParams(ctx, map[string]string{"Warntime": "20"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveParams(ctx, map[string]string{"Warntime": "25", "Nosm": "1"}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = OpenStore(ctx, path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	recs, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(recs, func(a, b Record) int { return strings.Compare(a.XName, b.XName) })
	want := []Record{
		{XName: "x0c0s0b0n0", State: Dead, Prev: Alive, LastHB: t0, ChangedAt: t0.Add(time.Minute), PendingHSM: true},
		{XName: "x0c0s0b0n1", State: Warned, Prev: Alive, LastHB: t0, ChangedAt: t0.Add(time.Second)},
	}
	if diff := cmp.Diff(want, recs); diff != "" {
		t.Errorf("loaded (-want +got):\n%s", diff)
	}
	if got, ok, err := s.LastAlive(ctx); err != nil || !ok || !got.Equal(alive) {
		t.Errorf("LastAlive = %v %v %v, want %v", got, ok, err, alive)
	}
	if p, err := s.LoadParams(ctx); err != nil || !maps.Equal(p, map[string]string{"Warntime": "25", "Nosm": "1"}) {
		t.Errorf("LoadParams = %v %v, want the second set", p, err)
	}
}
