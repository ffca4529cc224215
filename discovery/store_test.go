package discovery

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/testpeer"
)

// pg is the package's PostgreSQL server, started by the first test that
// asks for a database on it (pg.EachDB).
var pg = testpeer.NewPostgres()

func TestMain(m *testing.M) { pg.Main(m) }

// TestStoreRestart: what the store saved (endpoints in each state with
// their sealed passwords and pinned keys, node-side passwords, leases) is
// what a store opened afresh reads, and the conditional updates (PinKey,
// SetStateFrom, ClearKey) change only the rows they should.
func TestStoreRestart(t *testing.T) { pg.EachDB(t, testStoreRestart) }

func testStoreRestart(t *testing.T, db testpeer.DB) {
	ctx := t.Context()
	path, box := db(t), testBox(t)
	now := time.Unix(1_900_000_000, 0).UTC() // past 2^31 seconds: 2030
	st, err := OpenStore(ctx, path, box, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	eps := []Endpoint{
		{Xname: "x3000c0s2b0", Kind: KindRiver, MAC: "a4:bf:01:3e:00:02", IP: "10.254.7.2", Addr: "10.254.7.2",
			User: "root", Password: "pw-2", State: StateRegistered, Key: "key-2"},
		{Xname: "x3000c0s1b0", Kind: KindRiver, MAC: "a4:bf:01:3e:00:01", IP: "10.254.7.1", Addr: "10.254.7.1:8443",
			User: "root", Pending: "pending-1", State: StatePending},
		{Xname: "x1000c0s0b0", Kind: KindMountain, MAC: "02:03:e8:00:00:00", User: "root", Password: "pw-m", State: StateMissing},
	}
	for _, e := range eps {
		if err := st.Put(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	// A Put without a key keeps the pinned one; PinKey pins only where
	// none is.
	if err := st.Put(ctx, Endpoint{Xname: "x3000c0s2b0", Kind: KindRiver, MAC: eps[0].MAC, IP: eps[0].IP, Addr: eps[0].Addr,
		User: "root", Password: "pw-2", State: StateRegistered}); err != nil {
		t.Fatal(err)
	}
	for x, want := range map[string]bool{"x3000c0s2b0": false, "x3000c0s1b0": true} {
		if pinned, err := st.PinKey(ctx, x, "key-new"); err != nil || pinned != want {
			t.Errorf("PinKey %s: %v, %v; want %v", x, pinned, err, want)
		}
	}
	eps[1].Key = "key-new"
	if ok, err := st.SetStateFrom(ctx, "x1000c0s0b0", StateRegistered, StateRemoving); err != nil || ok {
		t.Errorf("SetStateFrom of a missing endpoint as registered: %v, %v; want no change", ok, err)
	}
	if ok, err := st.SetStateFrom(ctx, "x1000c0s0b0", StateMissing, StateRemoving); err != nil || !ok {
		t.Errorf("SetStateFrom missing: %v, %v", ok, err)
	}
	eps[2].State = StateRemoving
	if err := st.ClearKey(ctx, "x9000c0s0b0"); err == nil {
		t.Error("ClearKey of no endpoint: no error")
	}
	if err := st.PutNodeCreds(ctx, "a4:bf:01:3e:00:09", "node-pw"); err != nil {
		t.Fatal(err)
	}
	if err := st.PutLeases(ctx, []leaseChange{{MAC: "a4:bf:01:3e:00:09", IP: "10.254.7.9", Expires: now.Add(time.Hour)},
		{MAC: "a4:bf:01:3e:00:08", IP: "10.254.7.8", Expires: now.Add(-time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	if n, err := st.SweepLeases(ctx, now); err != nil || n != 1 {
		t.Errorf("SweepLeases: %d, %v; want the ended one", n, err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st = openTestStore(t, path, box)
	got, err := st.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []Endpoint{eps[2], eps[1], eps[0]} // by xname
	for i := range want {
		want[i].Updated = now
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("endpoints after a reopen (-want +got):\n%s", diff)
	}
	if e, err := st.ByMAC(ctx, eps[0].MAC); err != nil || e.Xname != eps[0].Xname || e.Key != "key-2" {
		t.Errorf("ByMAC: %+v, %v", e, err)
	}
	if pend, err := st.List(ctx, StatePending); err != nil || len(pend) != 1 || pend[0].Xname != "x3000c0s1b0" {
		t.Errorf("pending endpoints %+v, %v", pend, err)
	}
	if err := st.ClearKey(ctx, "x3000c0s2b0"); err != nil {
		t.Fatal(err)
	}
	if e, err := st.Get(ctx, "x3000c0s2b0"); err != nil || e.Key != "" || e.Password != "pw-2" {
		t.Errorf("after ClearKey: %+v, %v", e, err)
	}
	if nc, err := st.NodeCreds(ctx, "a4:bf:01:3e:00:09"); err != nil || nc.Password != "node-pw" {
		t.Errorf("node credentials %q, %v", nc.Password, err)
	}
	leases, err := st.Leases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantLeases := map[string]heldLease{"a4:bf:01:3e:00:09": {ip: "10.254.7.9", expires: now.Add(time.Hour)}}
	if diff := cmp.Diff(wantLeases, leases, cmp.AllowUnexported(heldLease{})); diff != "" {
		t.Errorf("leases after a reopen (-want +got):\n%s", diff)
	}
}
