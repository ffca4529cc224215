package ipxe

import (
	"testing"
	"time"
)

// TestResyncKeepsNewerSCNs: an SCN applied while a full read of HSM is under
// way survives the read, which may predate it.
func TestResyncKeepsNewerSCNs(t *testing.T) {
	c := NewCache()
	old := node("x1c0s0b0n0", "Compute", "", 1, []string{"aa:bb:cc:00:00:01"})
	c.replaceAll(map[string]*Node{old.ID: old})
	c.beginRead()
	c.applySCN(&SCN{Components: []string{"x1c0s0b0n0"}, Role: "Application"})
	read := node("x1c0s0b0n0", "Compute", "", 1, []string{"aa:bb:cc:00:00:01"}) // what HSM answered before the SCN
	c.replaceAll(map[string]*Node{read.ID: read})
	if n, _ := c.ByMAC("AA:BB:CC:00:00:01"); n == nil || n.Role != "Application" {
		t.Errorf("after the read, node = %+v, want Role Application from the SCN", n)
	}
	// Without a read under way, nothing is kept.
	c.applySCN(&SCN{Components: []string{"x1c0s0b0n0"}, State: "Off"})
	c.replaceAll(map[string]*Node{read.ID: read})
	if n, _ := c.Node("x1c0s0b0n0"); n.State != "Ready" {
		t.Errorf("State = %s, want the read's Ready", n.State)
	}
}

func TestKnownMAC(t *testing.T) {
	c := NewCache()
	n := node("x1c0s0b0n0", "Compute", "", 1, []string{"aa:bb:cc:00:00:01"}, "fd00::1", "10.1.0.5")
	c.replaceAll(map[string]*Node{n.ID: n})
	x, ip, ok := c.KnownMAC([]byte{0xaa, 0xbb, 0xcc, 0, 0, 1})
	if !ok || x != "x1c0s0b0n0" || ip.String() != "10.1.0.5" {
		t.Errorf("KnownMAC = %s %s %v", x, ip, ok)
	}
	if _, _, ok := c.KnownMAC([]byte{0xaa, 0xbb, 0xcc, 0, 0, 2}); ok {
		t.Error("an unknown MAC is known")
	}
}

// TestHistoryPersistsCoarsely: the API answers each access at once; the
// database is rewritten for a node only once its stored time is
// persistEvery old.
func TestHistoryPersistsCoarsely(t *testing.T) {
	h := newHarness(t)
	hist, store := h.svc.hist, h.svc.store
	hist.touch("x1c0s0b0n0", EndpointBootscript, fixedNow)
	if err := store.flushHistory(t.Context(), hist); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		after     int64
		wantDirty int
	}{{after: 1, wantDirty: 0}, {after: persistEvery - 1, wantDirty: 0}, {after: persistEvery, wantDirty: 1}} {
		hist.touch("x1c0s0b0n0", EndpointBootscript, fixedNow.Add(time.Duration(tt.after)*time.Second))
		if got := hist.query("x1c0s0b0n0", "bootscript")[0].LastEpoch; got != fixedNow.Unix()+tt.after {
			t.Errorf("+%ds: API answers %d", tt.after, got)
		}
		if dirty := len(hist.pending()); dirty != tt.wantDirty {
			t.Errorf("+%ds: %d rows to write, want %d", tt.after, dirty, tt.wantDirty)
		}
	}
}
