package component_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

var t0 = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

// change is the part of a StateChange the tests compare.
type change struct {
	ID, From, To, Cause, Agent string
	At                         time.Time
}

func changes(h []hsm.StateChange) []change {
	out := []change{}
	for _, c := range h {
		out = append(out, change{ID: c.ID, From: c.OldState + "/" + c.OldFlag, To: c.State + "/" + c.Flag,
			Cause: c.Cause, Agent: c.Agent, At: c.Timestamp})
	}
	return out
}

// TestHistoryRecordsChanges: creation and every State or Flag change are
// recorded with their time and cause, in the order they happened; writes
// that change neither record nothing.
func TestHistoryRecordsChanges(t *testing.T) { pg.EachDB(t, testHistoryRecordsChanges) }

func testHistoryRecordsChanges(t *testing.T, db testpeer.DB) {
	clock := hsmtest.NewClock(t0)
	_, srv := hsmtest.OpenAPIOn(t, db, clock.Now)
	ctx := t.Context()
	cli := client.New(srv.URL, srv.Client(), "hms-cli")
	hbtd := client.New(srv.URL, srv.Client(), "hbtd")
	a, b := "x1c0s0b0n0", "x1c0s0b0n1"
	mustOK(t, cli.PostComponents(ctx, []hsm.Component{{ID: a, State: "Off"}, {ID: b, State: "Off"}}, false))
	clock.Add(time.Minute)
	mustOK(t, hbtd.BulkStateData(ctx, []string{a, b}, "Ready", "", false, nil))
	mustOK(t, hbtd.BulkStateData(ctx, []string{a, b}, "Ready", "", false, nil)) // no change
	mustOK(t, cli.BulkEnabled(ctx, []string{a}, false))                         // neither State nor Flag
	mustOK(t, cli.BulkRole(ctx, []string{a}, "Service", ""))
	clock.Add(time.Minute)
	mustOK(t, hbtd.BulkStateData(ctx, []string{b}, "Ready", "Warning", false, nil))
	mustOK(t, cli.StateData(ctx, a, "Halt", "", false))
	mustOK(t, cli.StateData(ctx, a, "Empty", "", false)) // refused by the state machine

	list, err := cli.ComponentHistory(ctx, nil)
	mustOK(t, err)
	var got []hsm.StateChange
	for _, h := range list.Components {
		got = append(got, h.History...)
	}
	t1, t2 := t0.Add(time.Minute), t0.Add(2*time.Minute)
	want := []change{
		{ID: a, From: "/", To: "Off/OK", Cause: "API", Agent: "hms-cli", At: t0},
		{ID: a, From: "Off/OK", To: "Ready/OK", Cause: "API", Agent: "hbtd", At: t1},
		{ID: a, From: "Ready/OK", To: "Halt/OK", Cause: "API", Agent: "hms-cli", At: t2},
		{ID: b, From: "/", To: "Off/OK", Cause: "API", Agent: "hms-cli", At: t0},
		{ID: b, From: "Off/OK", To: "Ready/OK", Cause: "API", Agent: "hbtd", At: t1},
		{ID: b, From: "Ready/OK", To: "Ready/Warning", Cause: "API", Agent: "hbtd", At: t2},
	}
	if diff := cmp.Diff(want, changes(got)); diff != "" {
		t.Errorf("history by ID (-want +got):\n%s", diff)
	}
	newest := list.Newest(2)
	if len(newest) != 2 || newest[0].ID != a || newest[0].State != "Halt" || newest[1].Flag != "Warning" ||
		newest[0].Seq <= newest[1].Seq {
		t.Errorf("newest 2: %+v, want a's Halt then b's Warning", newest)
	}
}

// TestHistoryContinuesAfterRestart: a restarted HSM numbers its history
// rows on from the last one stored (the store numbers them itself, from
// the largest seq read at open): its first change is recorded, after the
// ones before the restart, rather than refused for a seq already taken.
func TestHistoryContinuesAfterRestart(t *testing.T) { pg.EachDB(t, testHistoryContinuesAfterRestart) }

func testHistoryContinuesAfterRestart(t *testing.T, db testpeer.DB) {
	clock := hsmtest.NewClock(t0)
	ctx := t.Context()
	s, _ := hsmtest.NewStoreOn(t, db, core.Config{Now: clock.Now})
	api := func(s *core.Store) *client.Client {
		srv := httptest.NewServer(hsmtest.Mux(s))
		t.Cleanup(srv.Close)
		return client.New(srv.URL, srv.Client(), "hms-cli")
	}
	a, b := "x1c0s0b0n0", "x1c0s0b0n1"
	cli := api(s)
	mustOK(t, cli.PostComponents(ctx, []hsm.Component{{ID: a, State: "Off"}, {ID: b, State: "Off"}}, false))
	clock.Add(time.Minute)
	mustOK(t, cli.StateData(ctx, a, "On", "", false))
	s = hsmtest.Reopen(t, s, core.Config{Now: clock.Now})
	cli = api(s)
	clock.Add(time.Minute)
	mustOK(t, cli.StateData(ctx, b, "On", "", false))
	mustOK(t, cli.BulkStateData(ctx, []string{a, b}, "Ready", "", false, nil))
	list, err := cli.ComponentHistory(ctx, nil)
	mustOK(t, err)
	got := list.Newest(-1)
	// Oldest first; the changes of one write (one seq) by ID.
	slices.SortStableFunc(got, func(x, y hsm.StateChange) int {
		if x.Seq != y.Seq {
			return int(x.Seq - y.Seq)
		}
		return strings.Compare(x.ID, y.ID)
	})
	t1, t2 := t0.Add(time.Minute), t0.Add(2*time.Minute)
	want := []change{
		{ID: a, From: "/", To: "Off/OK", Cause: "API", Agent: "hms-cli", At: t0},
		{ID: b, From: "/", To: "Off/OK", Cause: "API", Agent: "hms-cli", At: t0},
		{ID: a, From: "Off/OK", To: "On/OK", Cause: "API", Agent: "hms-cli", At: t1},
		{ID: b, From: "Off/OK", To: "On/OK", Cause: "API", Agent: "hms-cli", At: t2},
		{ID: a, From: "On/OK", To: "Ready/OK", Cause: "API", Agent: "hms-cli", At: t2},
		{ID: b, From: "On/OK", To: "Ready/OK", Cause: "API", Agent: "hms-cli", At: t2},
	}
	if diff := cmp.Diff(want, changes(got)); diff != "" {
		t.Errorf("history, oldest first (-want +got):\n%s", diff)
	}
}

// TestHistoryQuery: the filters of the collection and of one xname.
func TestHistoryQuery(t *testing.T) { pg.EachDB(t, testHistoryQuery) }

func testHistoryQuery(t *testing.T, db testpeer.DB) {
	clock := hsmtest.NewClock(t0)
	_, srv := hsmtest.OpenAPIOn(t, db, clock.Now)
	ctx := t.Context()
	cli := client.New(srv.URL, srv.Client(), "")
	ids := []string{"x1c0s0b0n0", "x1c0s0b0n1", "x1c0s0b0n2"}
	mustOK(t, cli.PostComponents(ctx, []hsm.Component{{ID: ids[0], State: "Off"}, {ID: ids[1], State: "Off"}, {ID: ids[2], State: "Off"}}, false))
	for _, st := range []string{"On", "Ready", "Standby"} {
		clock.Add(time.Minute)
		mustOK(t, cli.BulkStateData(ctx, ids, st, "", false, nil))
	}
	// count is how many changes of each ID a query returns, by ID.
	count := func(h []hsm.StateHistory) map[string]int {
		out := map[string]int{}
		for _, c := range h {
			out[c.ID] = len(c.History)
		}
		return out
	}
	tests := []struct {
		name  string
		query url.Values
		want  map[string]int
	}{
		{name: "all", query: nil, want: map[string]int{ids[0]: 4, ids[1]: 4, ids[2]: 4}},
		{name: "ids, any case", query: url.Values{"id": {ids[0], "X1C0S0B0N2"}}, want: map[string]int{ids[0]: 4, ids[2]: 4}},
		{name: "state", query: url.Values{"State": {"ready", "standby"}}, want: map[string]int{ids[0]: 2, ids[1]: 2, ids[2]: 2}},
		{name: "limit keeps the newest", query: url.Values{"limit": {"4"}}, want: map[string]int{ids[0]: 1, ids[1]: 1, ids[2]: 2}},
		{name: "ids and limit: a write's last ID is its newest change", query: url.Values{"id": {ids[0], ids[2]}, "limit": {"3"}},
			want: map[string]int{ids[0]: 1, ids[2]: 2}},
		{name: "window, inclusive", query: url.Values{"starttime": {t0.Add(time.Minute).Format(time.RFC3339)},
			"endtime": {t0.Add(2 * time.Minute).Format(time.RFC3339)}}, want: map[string]int{ids[0]: 2, ids[1]: 2, ids[2]: 2}},
		{name: "unknown parameters are ignored", query: url.Values{"color": {"red"}, "id": {ids[1]}}, want: map[string]int{ids[1]: 4}},
		{name: "no match", query: url.Values{"state": {"Halt"}}, want: map[string]int{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cli.ComponentHistory(ctx, tc.query)
			mustOK(t, err)
			if diff := cmp.Diff(tc.want, count(got.Components)); diff != "" {
				t.Errorf("changes by ID (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("no limit given: the newest defaultHistoryLimit", func(t *testing.T) {
		defer component.SetDefaultHistoryLimit(4)()
		got, err := cli.ComponentHistory(ctx, nil)
		mustOK(t, err)
		if diff := cmp.Diff(map[string]int{ids[0]: 1, ids[1]: 1, ids[2]: 2}, count(got.Components)); diff != "" {
			t.Errorf("changes by ID (-want +got):\n%s", diff)
		}
	})

	one, err := cli.ComponentHistoryOf(ctx, "X1C0S0B0N1", url.Values{"limit": {"2"}, "id": {ids[0]}})
	mustOK(t, err)
	if diff := cmp.Diff([]string{"On/Ready", "Ready/Standby"}, transitions(one.History)); diff != "" || one.ID != ids[1] {
		t.Errorf("history of %s, limit 2: %s %v", ids[1], one.ID, diff)
	}
	if _, out := hsmtest.Do(t, srv, "GET", "/State/Components/History/x9c0s0b0n0", ""); string(out) != `{"ID":"x9c0s0b0n0","History":[]}`+"\n" {
		t.Errorf("history of an xname without changes: %s", out)
	}
}

func transitions(h []hsm.StateChange) []string {
	out := []string{}
	for _, c := range h {
		out = append(out, c.OldState+"/"+c.State)
	}
	return out
}

func TestHistoryBadQuery(t *testing.T) { pg.EachDB(t, testHistoryBadQuery) }

func testHistoryBadQuery(t *testing.T, db testpeer.DB) {
	a := hsmtest.NewServerOn(t, db)
	for path, detail := range map[string]string{
		"/State/Components/History?id=x1c9":                           `query parameter id: "x1c9" is not a valid xname`,
		"/State/Components/History?state=Sleepy":                      `query parameter state: invalid value "Sleepy"`,
		"/State/Components/History?limit=0":                           `query parameter limit: "0" is not a positive integer`,
		"/State/Components/History?starttime=yesterday":               `query parameter starttime: "yesterday" is not an RFC 3339 time`,
		"/State/Components/History/x1c9":                              `xname: "x1c9" is not a valid xname`,
		"/State/Components/History/x1c0s0b0n0?endtime=2026-13-01T00Z": `query parameter endtime: "2026-13-01T00Z" is not an RFC 3339 time`,
	} {
		a.Problem(400, "GET", path, nil, detail)
	}
}

// TestHistoryCauses: discovery's writes are recorded as Discovery; a store
// opened with NoHistory records nothing.
func TestHistoryCauses(t *testing.T) { pg.EachDB(t, testHistoryCauses) }

func testHistoryCauses(t *testing.T, db testpeer.DB) {
	s, _ := hsmtest.NewStoreOn(t, db, core.Config{})
	st := component.NewStore(s)
	mustOK(t, st.UpsertDiscovered(t.Context(), []hsm.Component{{ID: "x1c0s0b0n0", State: "On"}}, nil))
	h, err := st.History(t.Context(), component.HistoryQuery{})
	mustOK(t, err)
	if len(h) != 1 || len(h[0].History) != 1 || h[0].History[0].Cause != hsm.CauseDiscovery || h[0].History[0].Agent != "" {
		t.Errorf("history %+v, want one Discovery change", h)
	}

	off, _ := hsmtest.NewStoreOn(t, db, core.Config{NoHistory: true})
	st = component.NewStore(off)
	mustOK(t, st.UpsertComponents(t.Context(), []hsm.Component{{ID: "x1c0s0b0n0", State: "On"}}, false, nil))
	if h, err := st.History(t.Context(), component.HistoryQuery{}); err != nil || len(h) != 0 {
		t.Errorf("history with NoHistory: %+v, %v", h, err)
	}
}

// TestPruneHistory: the newest Rows changes are kept, the changes of one
// write together, and none older than Age by the store's clock.
func TestPruneHistory(t *testing.T) { pg.EachDB(t, testPruneHistory) }

func testPruneHistory(t *testing.T, db testpeer.DB) {
	clock := hsmtest.NewClock(t0)
	s, _ := hsmtest.NewStoreOn(t, db, core.Config{Now: clock.Now})
	st := component.NewStore(s)
	ctx := t.Context()
	ids := hsmtest.IDsOf(hsmtest.Nodes(10, 1))
	mustOK(t, st.UpsertComponents(ctx, hsmtest.Nodes(10, 1), false, nil)) // seq 1: 10 changes at t0
	for i, state := range []string{"On", "Ready", "Standby", "Ready"} {   // seq 2-5, one minute apart
		clock.Add(time.Minute)
		if _, err := st.UpdateState(ctx, ids, component.StateUpdate{State: state}); err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
	}
	// seqs are the writes left, and how many changes they hold.
	seqs := func() ([]int64, int) {
		h, err := st.History(ctx, component.HistoryQuery{})
		mustOK(t, err)
		var out []int64
		n := 0
		for _, c := range h {
			for _, e := range c.History {
				if !slices.Contains(out, e.Seq) {
					out = append(out, e.Seq)
				}
				n++
			}
		}
		slices.Sort(out)
		return out, n
	}
	steps := []struct {
		name    string
		keep    component.HistoryRetention
		deleted int64
		left    []int64
	}{
		{name: "within bounds", keep: component.HistoryRetention{Rows: 100, Age: time.Hour}, deleted: 0, left: []int64{1, 2, 3, 4, 5}},
		{name: "rows: a write goes whole", keep: component.HistoryRetention{Rows: 35}, deleted: 20, left: []int64{3, 4, 5}},
		{name: "age", keep: component.HistoryRetention{Rows: 100, Age: 90 * time.Second}, deleted: 10, left: []int64{4, 5}},
		{name: "rows 0 keeps none", keep: component.HistoryRetention{}, deleted: 20, left: nil},
	}
	for _, step := range steps {
		n, err := st.PruneHistory(ctx, step.keep)
		mustOK(t, err)
		got, changes := seqs()
		if n != step.deleted || !slices.Equal(got, step.left) || changes != 10*len(step.left) {
			t.Fatalf("%s: deleted %d, left writes %v (%d changes); want %d, %v", step.name, n, got, changes, step.deleted, step.left)
		}
		var byID int
		mustOK(t, s.DB.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM component_history_ids`).Scan(&byID))
		if byID != changes {
			t.Fatalf("%s: %d rows of component_history_ids left for %d changes", step.name, byID, changes)
		}
	}
	// Seq goes on from where it was after every row was deleted.
	mustOK(t, st.UpsertComponents(ctx, []hsm.Component{{ID: "x9c0s0b0n0", State: "Off"}}, false, nil))
	if got, _ := seqs(); !slices.Equal(got, []int64{6}) {
		t.Errorf("seqs after emptying %v, want [6]", got)
	}
}

// TestPruneHistoryBatches: more rows than one pruning transaction takes are
// all pruned, oldest first.
func TestPruneHistoryBatches(t *testing.T) { pg.EachDB(t, testPruneHistoryBatches) }

func testPruneHistoryBatches(t *testing.T, db testpeer.DB) {
	s, _ := hsmtest.NewStoreOn(t, db, core.Config{})
	st := component.NewStore(s)
	for i := range 7 {
		mustOK(t, st.UpsertComponents(t.Context(), []hsm.Component{{ID: fmt.Sprintf("x1c0s0b0n%d", i), State: "Off"}}, false, nil))
	}
	deleted, err := st.PruneHistory(t.Context(), component.HistoryRetention{Rows: 2, Batch: 2})
	mustOK(t, err)
	h, err := st.History(t.Context(), component.HistoryQuery{})
	mustOK(t, err)
	if deleted != 5 || len(h) != 2 || h[0].ID != "x1c0s0b0n5" || h[1].ID != "x1c0s0b0n6" {
		t.Errorf("deleted %d, left %+v; want 5, the newest 2", deleted, h)
	}
}

// TestHistoryBulkIsOneRowPerChange: a bulk change is stored as one row per
// distinct change (in pieces of core.HistoryMaxIDs), and each component's
// changes are read back from it.
func TestHistoryBulkIsOneRowPerChange(t *testing.T) { pg.EachDB(t, testHistoryBulkIsOneRowPerChange) }

func testHistoryBulkIsOneRowPerChange(t *testing.T, db testpeer.DB) {
	s, _ := hsmtest.NewStoreOn(t, db, core.Config{})
	st := component.NewStore(s)
	ctx := t.Context()
	n := core.HistoryMaxIDs + 5
	nodes := make([]hsm.Component, n)
	for i := range nodes {
		nodes[i] = hsm.Component{ID: fmt.Sprintf("x%dc%ds%db0n%d", 1000+i/512, (i/64)%8, (i/8)%8, i%8), State: "Off"}
	}
	mustOK(t, st.UpsertComponents(ctx, nodes, false, nil))
	ids := hsmtest.IDsOf(nodes)
	if _, err := st.UpdateState(ctx, ids[:3], component.StateUpdate{State: "On"}); err != nil {
		t.Fatal(err)
	}
	var rows int
	mustOK(t, s.DB.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM component_history`).Scan(&rows))
	if rows != 3 {
		t.Errorf("%d rows for %d creations and one change of 3, want 3", rows, n)
	}
	h, err := st.History(ctx, component.HistoryQuery{IDs: []string{ids[1], ids[n-1]}})
	mustOK(t, err)
	if len(h) != 2 || h[0].ID != ids[1] || len(h[0].History) != 2 || h[1].ID != ids[n-1] || len(h[1].History) != 1 {
		t.Errorf("history of %s and %s: %+v", ids[1], ids[n-1], h)
	}
}

// TestHistoryWire: the JSON of an entry, as documented.
func TestHistoryWire(t *testing.T) { pg.EachDB(t, testHistoryWire) }

func testHistoryWire(t *testing.T, db testpeer.DB) {
	clock := hsmtest.NewClock(t0)
	_, srv := hsmtest.OpenAPIOn(t, db, clock.Now)
	hsmtest.Do(t, srv, "POST", "/State/Components", `{"Components":[{"ID":"x1c0s0b0n0","State":"Off"}]}`)
	_, out := hsmtest.Do(t, srv, "GET", "/State/Components/History", "")
	var got any
	mustOK(t, json.Unmarshal(out, &got))
	want := map[string]any{"Components": []any{map[string]any{"ID": "x1c0s0b0n0", "History": []any{map[string]any{
		"ID": "x1c0s0b0n0", "Timestamp": "2026-11-24T12:00:00Z", "Seq": 1.0, "OldState": "", "OldFlag": "",
		"State": "Off", "Flag": "OK", "Cause": "API", "Agent": "Go-http-client"}}}}}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("GET /State/Components/History (-want +got):\n%s", diff)
	}
}

func mustOK(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// FuzzHistoryQuery feeds arbitrary query strings to the history routes:
// each answers 200 or a 400 problem, never anything else.
func FuzzHistoryQuery(f *testing.F) {
	for _, q := range []string{"id=x1c0s0b0n0&state=ready&limit=3", "starttime=2026-11-24T12:00:00Z&endtime=x", "limit=-1",
		"ID=X1C0S0B0N0&STATE=off", "state=%00", "limit=99999999999999999999"} {
		f.Add(q)
	}
	s, _ := hsmtest.NewStore(f, core.Config{})
	mustOK(f, component.NewStore(s).UpsertComponents(f.Context(), []hsm.Component{{ID: "x1c0s0b0n0", State: "Off"}}, false, nil))
	h := hsmtest.Mux(s)
	f.Fuzz(func(t *testing.T, q string) {
		for _, path := range []string{"/State/Components/History", "/State/Components/History/x1c0s0b0n0"} {
			req := httptest.NewRequest("GET", hsm.Base+path, nil)
			req.URL.RawQuery = q
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != 200 && w.Code != 400 {
				t.Fatalf("GET %s?%s: %d %s", path, q, w.Code, w.Body)
			}
		}
	})
}

// TestHistoryOfIDsAsAll: the history of given xnames, read by ID from the
// index for small writes and from the ids text for bulk ones (more than
// core.HistoryIndexMax IDs), is the whole history's changes of those
// xnames, in the same order, cut at the same limit.
func TestHistoryOfIDsAsAll(t *testing.T) { pg.EachDB(t, testHistoryOfIDsAsAll) }

func testHistoryOfIDsAsAll(t *testing.T, db testpeer.DB) {
	s, _ := hsmtest.NewStoreOn(t, db, core.Config{})
	st := component.NewStore(s)
	ctx := t.Context()
	nodes := hsmtest.Nodes(120, 2) // created in one bulk row
	mustOK(t, st.UpsertComponents(ctx, nodes, false, nil))
	ids := hsmtest.IDsOf(nodes)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 40 {
		size := []int{1, 2, 5, core.HistoryIndexMax, core.HistoryIndexMax + 1, 100}[rng.IntN(6)]
		pick := slices.Clone(ids)
		rng.Shuffle(len(pick), func(a, b int) { pick[a], pick[b] = pick[b], pick[a] })
		state := []string{"On", "Off", "Ready"}[i%3]
		if _, err := st.UpdateState(ctx, pick[:size], component.StateUpdate{State: state}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := st.NewestChanges(ctx, component.HistoryQuery{})
	mustOK(t, err)
	for i := range 50 {
		q := component.HistoryQuery{Limit: []int{0, 1, 3, 10, 50}[i%5]}
		for range 1 + rng.IntN(4) {
			q.IDs = append(q.IDs, ids[rng.IntN(len(ids))])
		}
		if i%7 == 0 {
			q.States = []string{"Ready"}
		}
		var want []string
		for _, c := range all {
			f := strings.Fields(c) // ID seq pos State
			if slices.Contains(q.IDs, f[0]) && (q.States == nil || f[3] == "Ready") {
				want = append(want, c)
			}
		}
		if q.Limit > 0 && len(want) > q.Limit {
			want = want[:q.Limit]
		}
		got, err := st.NewestChanges(ctx, q)
		mustOK(t, err)
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("query %+v (-whole history's +by ID):\n%s", q, diff)
		}
	}
}
