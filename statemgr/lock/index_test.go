package lock_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
	"github.com/hmsuite/hms/statemgr/lock"
	"github.com/hmsuite/hms/statemgr/migrations"
)

// TestIndexesFollowCommits runs group, lock, reservation and component
// writes, and after each compares what the live Store serves from memory
// (memberships, groups, lock status) with what a Store opened afresh on the
// same database loads from it.
func TestIndexesFollowCommits(t *testing.T) { pg.EachDB(t, testIndexesFollowCommits) }

func testIndexesFollowCommits(t *testing.T, db testpeer.DB) {
	clock := hsmtest.NewClock(time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC))
	path := db(t)
	a := openAPIServer(t, path, clock.Now)
	hsmtest.Seed(t, a.Server)
	steps := []struct {
		name, method, path string
		body               any
		advance            time.Duration
	}{
		{name: "group", method: "POST", path: "/groups",
			body: map[string]any{"label": "blue", "members": map[string]any{"ids": []string{"x0c0s0b0n0", "x0c0s1b0n0"}}}},
		{name: "partition", method: "POST", path: "/partitions",
			body: map[string]any{"name": "p1", "members": map[string]any{"ids": []string{"x0c0s1b0n0", "x0c0s1b0n1"}}}},
		{name: "add member", method: "POST", path: "/groups/blue/members", body: map[string]any{"id": "x0c0s0b0"}},
		{name: "remove member", method: "DELETE", path: "/groups/blue/members/x0c0s0b0n0"},
		{name: "patch", method: "PATCH", path: "/partitions/p1", body: map[string]any{"tags": []string{"t1"}}},
		{name: "lock", method: "POST", path: "/locks/lock", body: map[string]any{"ComponentIDs": []string{"x0c0s0b0n0"}}},
		{name: "admin reservation", method: "POST", path: "/locks/reservations", body: map[string]any{"ComponentIDs": []string{"x0c0s0b0n0"}}},
		{name: "service reservations", method: "POST", path: "/locks/service/reservations",
			body: map[string]any{"Partition": []string{"p1"}, "ReservationDuration": 2}},
		{name: "disable", method: "POST", path: "/locks/disable", body: map[string]any{"ComponentIDs": []string{"x0c0s1b0n1"}}},
		{name: "expired", advance: 3 * time.Minute},
		{name: "reserve again", method: "POST", path: "/locks/service/reservations",
			body: map[string]any{"ComponentIDs": []string{"x0c0s1b0n0", "x0c0s0b0n1"}, "ReservationDuration": 5}},
		{name: "delete reserved member", method: "DELETE", path: "/State/Components/x0c0s1b0n0"},
		{name: "recreate it", method: "POST", path: "/State/Components",
			body: map[string]any{"Components": []map[string]any{{"ID": "x0c0s1b0n0", "State": "On"}}}},
		{name: "delete group", method: "DELETE", path: "/groups/blue"},
		{name: "remove all reservations", method: "POST", path: "/locks/reservations/remove", body: map[string]any{}},
		{name: "delete everything", method: "DELETE", path: "/State/Components"},
	}
	for _, st := range steps {
		clock.Add(st.advance)
		if st.method != "" {
			// Any success: the status codes are another test's concern.
			if got, out := a.Do(st.method, st.path, st.body); got/100 != 2 {
				t.Fatalf("%s: %s %s: %d: %s", st.name, st.method, st.path, got, out)
			}
		}
		if st.name == "expired" {
			if _, err := lock.ReapReservations(a.store, t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		gets := []string{"/memberships", "/groups", "/partitions", "/locks/status", "/State/Components"}
		live := make([]any, len(gets))
		for i, get := range gets {
			live[i] = decodeAny(t, a.Must(200, "GET", get, nil))
		}
		// One store per database (PostgreSQL's advisory lock): the live
		// one closes, and the reopened one goes on as the live one.
		a.Close()
		a.store.Close()
		b := openAPIServer(t, path, clock.Now)
		for i, get := range gets {
			if d := cmp.Diff(decodeAny(t, b.Must(200, "GET", get, nil)), live[i]); d != "" {
				t.Errorf("after %s: GET %s, reopened (-) vs live (+):\n%s", st.name, get, d)
			}
		}
		a = b
	}
}

// storeServer is a test API over a store the test may close early.
type storeServer struct {
	*hsmtest.Server
	store *core.Store
}

// openAPIServer is a test API over the store at path.
func openAPIServer(t *testing.T, path string, now func() time.Time) storeServer {
	t.Helper()
	s, err := core.Open(t.Context(), path, migrations.FS, core.Config{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return storeServer{Server: hsmtest.Serve(t, s), store: s}
}

func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

// TestHandEncodersMatchEncodingJSON: the hand-written encoder of
// /locks/status writes what encoding/json writes.
func TestHandEncodersMatchEncodingJSON(t *testing.T) {
	now := time.Date(2026, 11, 24, 8, 0, 0, 123_000_000, time.UTC).UnixMilli()
	recs := []*core.Record{{ID: "x0c0s0b0n0", Locked: true}, {ID: "x0c0s0b0n1", ReservationDisabled: true}, {ID: "x1c0s0b0n0"}}
	states := []core.Resv{{}, {Created: now - 1000}, {Created: now - 1000, Expires: now + 60_000}, {Created: now - 5000, Expires: now}}
	for _, r := range recs {
		for _, st := range states {
			want, err := json.Marshal(core.LockStatus(r, st, now))
			if err != nil {
				t.Fatal(err)
			}
			if got := core.AppendLockStatus(nil, r, st, st.Active(now)); string(got) != string(want) {
				t.Errorf("lock status\n got %s\nwant %s", got, want)
			}
		}
	}
}
