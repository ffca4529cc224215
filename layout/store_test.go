package layout

import (
	"bytes"
	stdcmp "cmp"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/internal/testpeer"
)

func openTestStore(t *testing.T, path string, now time.Time) *Store {
	t.Helper()
	s, err := OpenStore(t.Context(), path, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestStoreSurvivesRestart checks that what the index serves is what the
// database holds: a store reopened on the same file answers the same.
func TestStoreSurvivesRestart(t *testing.T) { pg.EachDB(t, testStoreSurvivesRestart) }

func testStoreSurvivesRestart(t *testing.T, db testpeer.DB) {
	path := db(t)
	s := openTestStore(t, path, testNow)
	ctx := t.Context()
	if _, _, err := s.LoadState(ctx, bytes.NewReader(readTestdata(t, "river.json"))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutHardware(ctx, Hardware{Xname: "x3000c0s1b0n0", Class: "river",
		ExtraProperties: []byte(`{ "NID": 100, "Role": "Compute", "Extra": [1, 2] }`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteHardware(ctx, "x3000c0w15"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutNetwork(ctx, "CAN", Network{Type: "ethernet", IPRanges: []string{"10.102.0.0/24"}}); err != nil {
		t.Fatal(err)
	}
	var before, after bytes.Buffer
	if err := s.WriteDump(ctx, &before); err != nil {
		t.Fatal(err)
	}
	ver := s.Version()
	s.Close()

	r := openTestStore(t, path, testNow.Add(time.Hour))
	if err := r.WriteDump(ctx, &after); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before.String(), after.String()); diff != "" {
		t.Errorf("dump differs after reopening (-before +after):\n%s", diff)
	}
	if got := r.Version(); got != ver {
		t.Errorf("version %+v after reopening, want %+v", got, ver)
	}
	if got := r.SearchHardware(HardwareQuery{Props: []PropMatch{{Fields: []string{"NID"}, Value: "100"}}}); len(got) != 1 {
		t.Errorf("search by the updated NID found %d objects after reopening, want 1", len(got))
	}
}

func TestStoreIndexFollowsWrites(t *testing.T) { pg.EachDB(t, testStoreIndexFollowsWrites) }

func testStoreIndexFollowsWrites(t *testing.T, db testpeer.DB) {
	s := openTestStore(t, db(t), testNow)
	ctx := t.Context()
	put := func(x, extra string) {
		t.Helper()
		if _, err := s.PutHardware(ctx, Hardware{Xname: x, Class: River, ExtraProperties: []byte(extra)}); err != nil {
			t.Fatal(err)
		}
	}
	byVendor := func(v string) []string {
		var out []string
		for _, h := range s.SearchHardware(HardwareQuery{Props: []PropMatch{{Fields: []string{"VendorName"}, Value: v}}}) {
			out = append(out, h.Xname)
		}
		return out
	}
	put("x1c0w1j1", `{"VendorName":"eth1","NodeNics":["x1c0s1b0"]}`)
	put("x1c0w1j2", `{"VendorName":"eth2"}`)
	put("x1c0w1j1", `{"VendorName":"eth3"}`) // replacing drops the old values from the index
	tests := []struct {
		vendor string
		want   []string
	}{
		{vendor: "eth1", want: nil},
		{vendor: "eth2", want: []string{"x1c0w1j2"}},
		{vendor: "eth3", want: []string{"x1c0w1j1"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, byVendor(tt.vendor)); diff != "" {
			t.Errorf("VendorName=%s (-want +got):\n%s", tt.vendor, diff)
		}
	}
	if got := s.SearchHardware(HardwareQuery{Props: []PropMatch{{Fields: []string{"NodeNics"}, Value: "x1c0s1b0"}}}); len(got) != 0 {
		t.Errorf("replaced NodeNics still found: %v", got)
	}
	if _, err := s.DeleteHardware(ctx, "x1"); err == nil {
		t.Error("deleting an xname that is not stored succeeded; want not found even when it has stored descendants")
	}
	if _, err := s.DeleteHardware(ctx, "x1c0w1"); err == nil {
		t.Error("deleting an unstored switch succeeded")
	}
	put("x1c0w1", `{}`)
	put("x1c0w10", `{}`)
	deleted, err := s.DeleteHardware(ctx, "x1c0w1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"x1c0w1", "x1c0w1j1", "x1c0w1j2"}, deleted); diff != "" {
		t.Errorf("deleted (-want +got):\n%s (x1c0w10 is not below x1c0w1)", diff)
	}
	if s.HardwareCount() != 1 || byVendor("eth2") != nil {
		t.Errorf("after the delete: %d objects, eth2 -> %v; want only x1c0w10", s.HardwareCount(), byVendor("eth2"))
	}
}

// TestConcurrentPutsShareCommits: PUTs and POSTs sent at once are group-
// committed, each with its own answer: of two POSTs of one object one
// creates it and the other conflicts; of two PUTs one creates. The counter
// counts every write, and a reopened store holds them all.
func TestConcurrentPutsShareCommits(t *testing.T) { pg.EachDB(t, testConcurrentPutsShareCommits) }

func testConcurrentPutsShareCommits(t *testing.T, db testpeer.DB) {
	path := db(t)
	s := openTestStore(t, path, testNow)
	const n = 50
	type result struct {
		created bool
		err     error
	}
	res := make([]result, 4*n)
	var wg sync.WaitGroup
	for i := range 4 * n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := fmt.Sprintf("x%dc0s0b0n0", 1000+i%(2*n))
			if i%(2*n) < n { // POSTs
				res[i].err = s.CreateHardware(t.Context(), Hardware{Xname: x, Class: "Mountain"})
				return
			}
			res[i].created, res[i].err = s.PutHardware(t.Context(), Hardware{Xname: x, Class: "Mountain"})
		}()
	}
	wg.Wait()
	for i := range 2 * n {
		a, b := res[i], res[i+2*n]
		if i < n {
			if (a.err == nil) == (b.err == nil) || !errors.Is(stdcmp.Or(a.err, b.err), problem.ErrConflict) {
				t.Errorf("POSTs of object %d: %v and %v, want one created and one conflict", i, a.err, b.err)
			}
			continue
		}
		if a.err != nil || b.err != nil || a.created == b.created {
			t.Errorf("PUTs of object %d: %+v and %+v, want one created and one replaced", i, a, b)
		}
	}
	if got, want := s.Version().Counter, int64(3*n); got != want {
		t.Errorf("counter %d, want %d (one per write)", got, want)
	}
	s.Close()
	if got := openTestStore(t, path, testNow).HardwareCount(); got != 2*n {
		t.Errorf("%d objects after reopening, want %d", got, 2*n)
	}
}

// refuseTrigger is a trigger that fails the insert of x1000c0s2b0n0, in the
// SQL of db's dialect.
func refuseTrigger(db string) string {
	if sqldb.IsPostgres(db) {
		return `CREATE FUNCTION refuse_s2() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.xname = 'x1000c0s2b0n0' THEN RAISE EXCEPTION 'refused by the test'; END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER refuse_s2 BEFORE INSERT ON hardware FOR EACH ROW EXECUTE FUNCTION refuse_s2();`
	}
	return `CREATE TRIGGER refuse_s2 BEFORE INSERT ON hardware
		WHEN NEW.xname = 'x1000c0s2b0n0' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`
}

// TestPutRoundOneFails: a round of PUTs in which one write fails commits
// the others in its one transaction (the version counted once for each)
// and refuses that one alone, with its own error; the index serves the
// stored ones only.
func TestPutRoundOneFails(t *testing.T) { pg.EachDB(t, testPutRoundOneFails) }

func testPutRoundOneFails(t *testing.T, db testpeer.DB) {
	path := db(t)
	s := openTestStore(t, path, testNow)
	ctx := t.Context()
	if _, err := s.db.W.ExecContext(ctx, refuseTrigger(path)); err != nil {
		t.Fatal(err)
	}
	var round []*hwPut
	for i := range 4 {
		e, err := newEntry(Hardware{Xname: fmt.Sprintf("x1000c0s%db0n0", i), Class: "Mountain"}, testNow, timeText(testNow), nil)
		if err != nil {
			t.Fatal(err)
		}
		round = append(round, &hwPut{e: e})
	}
	before := s.db.Commits()
	errs := s.commitPuts(ctx, round)
	if n := s.db.Commits() - before; n != 1 {
		t.Errorf("the round took %d commits, want 1", n)
	}
	for i, err := range errs {
		if want := i == 2; (err != nil) != want || want && !strings.Contains(err.Error(), "refused by the test") {
			t.Errorf("PUT %d: %v", i, err)
		}
	}
	if got := s.Version().Counter; got != 3 {
		t.Errorf("counter %d, want 3", got)
	}
	s.Close()
	re := openTestStore(t, path, testNow)
	if got := re.HardwareCount(); got != 3 {
		t.Errorf("%d objects after reopening, want 3", got)
	}
	if got := re.Version().Counter; got != 3 {
		t.Errorf("counter after reopening %d, want 3", got)
	}
}
