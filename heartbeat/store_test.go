package heartbeat

import (
	"path/filepath"
	"testing"
	"time"
)

// TestStorePendingAcks: a receiver's confirmation clears the pending mark
// whether it arrives after the transition was written or before (the
// notifier can be faster than the store writer), and only for that
// transition, not for a later one of the same node.
func TestStorePendingAcks(t *testing.T) {
	ctx := t.Context()
	s, err := OpenStore(ctx, filepath.Join(t.TempDir(), "hb.db"), nil, nil)
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
