package statemgr

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hmsuite/hms/internal/xname"
)

// glNewTestAPI opens a store in a temporary directory and serves its API.
func glNewTestAPI(t testing.TB, now func() time.Time) (*Store, *httptest.Server) {
	t.Helper()
	s, err := OpenStore(t.Context(), filepath.Join(t.TempDir(), "hsm.db"), StoreConfig{Now: now})
	if err != nil {
		t.Fatalf("OpenStore: %v", err)
	}
	srv := httptest.NewServer(NewAPI(s, slog.New(slog.DiscardHandler), nil).Handler())
	t.Cleanup(func() {
		srv.Close()
		s.Close()
	})
	return s, srv
}

// glAddComponents inserts components straight into the table, bypassing the
// components API, so these tests do not depend on it.
func glAddComponents(t testing.TB, s *Store, ids ...string) {
	t.Helper()
	tx, err := s.DB.W.Begin()
	if err != nil {
		t.Fatal(err)
	}
	stmt, err := tx.Prepare(`INSERT INTO components (id, type, state, flag) VALUES (?, ?, 'Ready', 'OK')`)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := stmt.Exec(id, string(xname.TypeOf(id))); err != nil {
			t.Fatalf("insert component %s: %v", id, err)
		}
	}
	stmt.Close()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// Written behind the Store's back (fast for 100,000): reload its index.
	if err := s.LoadComponents(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// glStep is one request in an ordered API scenario. want, when set, is compared
// as JSON with the response body; detail, when set, must appear in the problem detail.
type glStep struct {
	name, method, path, body string
	status                   int
	want, detail             string
}

func glDo(t testing.TB, srv *httptest.Server, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+Base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode >= 400 && resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("%s %s: error with Content-Type %q, want application/problem+json", method, path, resp.Header.Get("Content-Type"))
	}
	return resp.StatusCode, b
}

func glRunSteps(t *testing.T, srv *httptest.Server, steps []glStep) {
	t.Helper()
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			status, body := glDo(t, srv, st.method, st.path, st.body)
			if status != st.status {
				t.Fatalf("%s %s: status %d, want %d; body %s", st.method, st.path, status, st.status, body)
			}
			if st.want != "" {
				glJSONEqual(t, body, st.want)
			}
			if st.detail != "" {
				var p struct{ Detail string }
				if err := json.Unmarshal(body, &p); err != nil || !strings.Contains(p.Detail, st.detail) {
					t.Errorf("problem detail %q does not mention %q (body %s)", p.Detail, st.detail, body)
				}
			}
		})
	}
}

func glJSONEqual(t testing.TB, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("response is not JSON: %v: %s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want JSON %s: %v", want, err)
	}
	if d := cmp.Diff(w, g); d != "" {
		t.Errorf("body mismatch (-want +got):\n%s", d)
	}
}

func TestGroupsAPI(t *testing.T) {
	s, srv := glNewTestAPI(t, nil)
	glAddComponents(t, s, "x0c0s0b0n0", "x0c0s0b0n1", "x0c0s1b0n0", "x0c0s1b0n1", "x0c0s0b0")
	glRunSteps(t, srv, []glStep{
		{name: "create", method: "POST", path: "/groups", status: 201,
			body: `{"label":"Blue","description":"d","tags":["T1"],"members":{"ids":["x0c0s0b0n0","x00c0s0b0n1","x0c0s0b0n0"]}}`,
			want: `[{"URI":"/hsm/v2/groups/blue"}]`},
		{name: "get", method: "GET", path: "/groups/BLUE", status: 200,
			want: `{"label":"blue","description":"d","tags":["t1"],"members":{"ids":["x0c0s0b0n0","x0c0s0b0n1"]}}`},
		{name: "duplicate label", method: "POST", path: "/groups", body: `{"label":"blue"}`, status: 409, detail: "label"},
		{name: "bad label", method: "POST", path: "/groups", body: `{"label":"bad label!"}`, status: 400, detail: "label"},
		{name: "missing label", method: "POST", path: "/groups", body: `{"description":"x"}`, status: 400, detail: "label"},
		{name: "bad tag", method: "POST", path: "/groups", body: `{"label":"red","tags":["ok","no/slash"]}`, status: 400, detail: "tags[1]"},
		{name: "unknown member", method: "POST", path: "/groups", status: 400, detail: "members.ids[1]",
			body: `{"label":"red","members":{"ids":["x0c0s0b0n0","x9c0s0b0n0"]}}`},
		{name: "bad member xname", method: "POST", path: "/groups", body: `{"label":"red","members":{"ids":["node7"]}}`, status: 400, detail: "members.ids[0]"},
		{name: "malformed json", method: "POST", path: "/groups", body: `{"label":`, status: 400},
		{name: "wrong type", method: "POST", path: "/groups", body: `{"label":"red","tags":"t"}`, status: 400, detail: "tags"},
		{name: "failed creates stored nothing", method: "GET", path: "/groups/red", status: 404},
		{name: "labels", method: "GET", path: "/groups/labels", status: 200, want: `["blue"]`},
		{name: "patch description", method: "PATCH", path: "/groups/blue", body: `{"description":"new"}`, status: 204},
		{name: "patch kept tags", method: "GET", path: "/groups/blue", status: 200,
			want: `{"label":"blue","description":"new","tags":["t1"],"members":{"ids":["x0c0s0b0n0","x0c0s0b0n1"]}}`},
		{name: "patch tags", method: "PATCH", path: "/groups/blue", body: `{"tags":["A","b"]}`, status: 204},
		{name: "patch bad tag", method: "PATCH", path: "/groups/blue", body: `{"tags":["a b"]}`, status: 400, detail: "tags[0]"},
		{name: "patch missing", method: "PATCH", path: "/groups/nosuch", body: `{"description":"x"}`, status: 404},
		{name: "filter tag", method: "GET", path: "/groups?tag=a", status: 200,
			want: `[{"label":"blue","description":"new","tags":["a","b"],"members":{"ids":["x0c0s0b0n0","x0c0s0b0n1"]}}]`},
		{name: "filter tag none", method: "GET", path: "/groups?tag=zzz", status: 200, want: `[]`},
		{name: "filter group none", method: "GET", path: "/groups?group=green", status: 200, want: `[]`},
		{name: "filter bad group", method: "GET", path: "/groups?group=a*b", status: 400, detail: "group"},
		{name: "add member", method: "POST", path: "/groups/blue/members", body: `{"id":"x0c0s1b0n0"}`, status: 201,
			want: `[{"URI":"/hsm/v2/groups/blue/members/x0c0s1b0n0"}]`},
		{name: "add member again", method: "POST", path: "/groups/blue/members", body: `{"id":"x0c0s1b0n0"}`, status: 409},
		{name: "add unknown component", method: "POST", path: "/groups/blue/members", body: `{"id":"x9c0s0b0n0"}`, status: 400, detail: "id"},
		{name: "add bad xname", method: "POST", path: "/groups/blue/members", body: `{"id":"bogus"}`, status: 400, detail: "id"},
		{name: "add to missing group", method: "POST", path: "/groups/nosuch/members", body: `{"id":"x0c0s1b0n0"}`, status: 404},
		{name: "members", method: "GET", path: "/groups/blue/members", status: 200,
			want: `{"ids":["x0c0s0b0n0","x0c0s0b0n1","x0c0s1b0n0"]}`},
		{name: "remove member", method: "DELETE", path: "/groups/blue/members/x0c0s1b0n0", status: 200,
			want: `{"code":0,"message":"deleted 1 entry"}`},
		{name: "remove member again", method: "DELETE", path: "/groups/blue/members/x0c0s1b0n0", status: 404},
		{name: "remove bad xname", method: "DELETE", path: "/groups/blue/members/zz", status: 400, detail: "xname_id"},
		{name: "members of missing", method: "GET", path: "/groups/nosuch/members", status: 404},
		{name: "empty group", method: "POST", path: "/groups", body: `{"label":"empty"}`, status: 201},
		{name: "empty members", method: "GET", path: "/groups/empty", status: 200, want: `{"label":"empty","description":"","members":{"ids":[]}}`},
		{name: "delete", method: "DELETE", path: "/groups/empty", status: 200, want: `{"code":0,"message":"deleted 1 entry"}`},
		{name: "delete again", method: "DELETE", path: "/groups/empty", status: 404},
		{name: "list", method: "GET", path: "/groups", status: 200,
			want: `[{"label":"blue","description":"new","tags":["a","b"],"members":{"ids":["x0c0s0b0n0","x0c0s0b0n1"]}}]`},
	})
}

func TestExclusiveGroups(t *testing.T) {
	s, srv := glNewTestAPI(t, nil)
	glAddComponents(t, s, "x0c0s0b0n0", "x0c0s0b0n1", "x0c0s1b0n0")
	glRunSteps(t, srv, []glStep{
		{name: "first exclusive", method: "POST", path: "/groups", status: 201,
			body: `{"label":"e1","exclusiveGroup":"Ex","members":{"ids":["x0c0s0b0n0"]}}`},
		{name: "get shows exclusive", method: "GET", path: "/groups/e1", status: 200,
			want: `{"label":"e1","description":"","exclusiveGroup":"ex","members":{"ids":["x0c0s0b0n0"]}}`},
		{name: "second exclusive overlapping", method: "POST", path: "/groups", status: 409, detail: "e1",
			body: `{"label":"e2","exclusiveGroup":"ex","members":{"ids":["x0c0s0b0n1","x0c0s0b0n0"]}}`},
		{name: "nothing created", method: "GET", path: "/groups/e2", status: 404},
		{name: "second exclusive disjoint", method: "POST", path: "/groups", status: 201,
			body: `{"label":"e2","exclusiveGroup":"ex","members":{"ids":["x0c0s0b0n1"]}}`},
		{name: "add overlapping member", method: "POST", path: "/groups/e2/members", body: `{"id":"x0c0s0b0n0"}`, status: 409, detail: "e1"},
		{name: "other exclusive label is fine", method: "POST", path: "/groups", status: 201,
			body: `{"label":"f1","exclusiveGroup":"other","members":{"ids":["x0c0s0b0n0"]}}`},
		{name: "plain group is fine", method: "POST", path: "/groups", status: 201,
			body: `{"label":"plain","members":{"ids":["x0c0s0b0n0","x0c0s0b0n1"]}}`},
		{name: "delete holder", method: "DELETE", path: "/groups/e1", status: 200},
		{name: "now it may move", method: "POST", path: "/groups/e2/members", body: `{"id":"x0c0s0b0n0"}`, status: 201},
		{name: "membership", method: "GET", path: "/memberships/x0c0s0b0n0", status: 200,
			want: `{"id":"x0c0s0b0n0","partitionName":"","groupLabels":["e2","f1","plain"]}`},
	})
}

func TestPartitionsAPI(t *testing.T) {
	s, srv := glNewTestAPI(t, nil)
	glAddComponents(t, s, "x0c0s0b0n0", "x0c0s0b0n1", "x0c0s1b0n0", "x0c0s1b0n1")
	glRunSteps(t, srv, []glStep{
		{name: "create p1", method: "POST", path: "/partitions", status: 201, want: `[{"URI":"/hsm/v2/partitions/p1"}]`,
			body: `{"name":"p1","description":"one","tags":["t"],"members":{"ids":["x0c0s0b0n0","x0c0s0b0n1"]}}`},
		{name: "overlapping p2", method: "POST", path: "/partitions", status: 409, detail: "p1",
			body: `{"name":"p2","members":{"ids":["x0c0s1b0n0","x0c0s0b0n1"]}}`},
		{name: "p2 not created", method: "GET", path: "/partitions/p2", status: 404},
		{name: "x0c0s1b0n0 untouched", method: "GET", path: "/memberships/x0c0s1b0n0", status: 200,
			want: `{"id":"x0c0s1b0n0","partitionName":"","groupLabels":[]}`},
		{name: "create p2", method: "POST", path: "/partitions", status: 201, body: `{"name":"p2","members":{"ids":["x0c0s1b0n0"]}}`},
		{name: "duplicate name", method: "POST", path: "/partitions", status: 409, body: `{"name":"p2"}`, detail: "name"},
		{name: "reserved name", method: "POST", path: "/partitions", status: 400, body: `{"name":"NULL"}`, detail: "name"},
		{name: "missing name", method: "POST", path: "/partitions", status: 400, body: `{}`, detail: "name"},
		{name: "group may not take partition name", method: "POST", path: "/groups", status: 409, body: `{"label":"p1"}`, detail: "partition"},
		{name: "move member in", method: "POST", path: "/partitions/p2/members", status: 409, body: `{"id":"x0c0s0b0n0"}`, detail: "p1"},
		{name: "free member in", method: "POST", path: "/partitions/p2/members", status: 201, body: `{"id":"x0c0s1b0n1"}`,
			want: `[{"URI":"/hsm/v2/partitions/p2/members/x0c0s1b0n1"}]`},
		{name: "names", method: "GET", path: "/partitions/names", status: 200, want: `["p1","p2"]`},
		{name: "get", method: "GET", path: "/partitions/p1", status: 200,
			want: `{"name":"p1","description":"one","tags":["t"],"members":{"ids":["x0c0s0b0n0","x0c0s0b0n1"]}}`},
		{name: "list filtered", method: "GET", path: "/partitions?partition=p2", status: 200,
			want: `[{"name":"p2","description":"","members":{"ids":["x0c0s1b0n0","x0c0s1b0n1"]}}]`},
		{name: "list by tag", method: "GET", path: "/partitions?tag=t", status: 200,
			want: `[{"name":"p1","description":"one","tags":["t"],"members":{"ids":["x0c0s0b0n0","x0c0s0b0n1"]}}]`},
		{name: "patch", method: "PATCH", path: "/partitions/p2", status: 204, body: `{"description":"two","tags":[]}`},
		{name: "patched", method: "GET", path: "/partitions/p2", status: 200,
			want: `{"name":"p2","description":"two","members":{"ids":["x0c0s1b0n0","x0c0s1b0n1"]}}`},
		{name: "partition is not a group", method: "GET", path: "/groups/p2", status: 404},
		{name: "members", method: "GET", path: "/partitions/p2/members", status: 200, want: `{"ids":["x0c0s1b0n0","x0c0s1b0n1"]}`},
		{name: "remove member", method: "DELETE", path: "/partitions/p1/members/x0c0s0b0n0", status: 200},
		{name: "removed member may move", method: "POST", path: "/partitions/p2/members", status: 201, body: `{"id":"x0c0s0b0n0"}`},
		{name: "delete", method: "DELETE", path: "/partitions/p1", status: 200},
		{name: "delete missing", method: "DELETE", path: "/partitions/p1", status: 404},
		{name: "freed by delete", method: "POST", path: "/partitions", status: 201, body: `{"name":"p3","members":{"ids":["x0c0s0b0n1"]}}`},
	})
}

func TestGroupPartitionFilter(t *testing.T) {
	s, srv := glNewTestAPI(t, nil)
	glAddComponents(t, s, "x0c0s0b0n0", "x0c0s0b0n1", "x0c0s1b0n0")
	glRunSteps(t, srv, []glStep{
		{name: "p1", method: "POST", path: "/partitions", status: 201, body: `{"name":"p1","members":{"ids":["x0c0s0b0n0"]}}`},
		{name: "p2", method: "POST", path: "/partitions", status: 201, body: `{"name":"p2","members":{"ids":["x0c0s0b0n1"]}}`},
		{name: "g", method: "POST", path: "/groups", status: 201, body: `{"label":"g","members":{"ids":["x0c0s0b0n0","x0c0s0b0n1","x0c0s1b0n0"]}}`},
		{name: "group in p1", method: "GET", path: "/groups/g?partition=p1", status: 200,
			want: `{"label":"g","description":"","members":{"ids":["x0c0s0b0n0"]}}`},
		{name: "members in p2", method: "GET", path: "/groups/g/members?partition=p2", status: 200, want: `{"ids":["x0c0s0b0n1"]}`},
		{name: "members in no partition", method: "GET", path: "/groups/g/members?partition=NULL", status: 200, want: `{"ids":["x0c0s1b0n0"]}`},
		{name: "bad partition", method: "GET", path: "/groups/g/members?partition=p%2A", status: 400, detail: "partition"},
	})
}

func TestMembershipsAPI(t *testing.T) {
	s, srv := glNewTestAPI(t, nil)
	glAddComponents(t, s, "x0c0s0b0n0", "x0c0s0b0n1", "x0c0s0b0")
	if _, err := s.DB.W.Exec(`UPDATE components SET nid = 7, state = 'Off' WHERE id = 'x0c0s0b0n1'`); err != nil {
		t.Fatal(err)
	}
	if err := s.LoadComponents(t.Context()); err != nil {
		t.Fatal(err)
	}
	glRunSteps(t, srv, []glStep{
		{name: "p1", method: "POST", path: "/partitions", status: 201, body: `{"name":"p1","members":{"ids":["x0c0s0b0n0"]}}`},
		{name: "a", method: "POST", path: "/groups", status: 201, body: `{"label":"a","members":{"ids":["x0c0s0b0n0","x0c0s0b0n1"]}}`},
		{name: "b", method: "POST", path: "/groups", status: 201, body: `{"label":"b","members":{"ids":["x0c0s0b0n0"]}}`},
		{name: "all", method: "GET", path: "/memberships", status: 200, want: `[
			{"id":"x0c0s0b0","partitionName":"","groupLabels":[]},
			{"id":"x0c0s0b0n0","partitionName":"p1","groupLabels":["a","b"]},
			{"id":"x0c0s0b0n1","partitionName":"","groupLabels":["a"]}]`},
		{name: "by type", method: "GET", path: "/memberships?type=nodebmc", status: 200,
			want: `[{"id":"x0c0s0b0","partitionName":"","groupLabels":[]}]`},
		{name: "by id repeated", method: "GET", path: "/memberships?id=x0c0s0b0n1&id=x0c0s0b0", status: 200,
			want: `[{"id":"x0c0s0b0","partitionName":"","groupLabels":[]},{"id":"x0c0s0b0n1","partitionName":"","groupLabels":["a"]}]`},
		{name: "by state", method: "GET", path: "/memberships?state=off", status: 200,
			want: `[{"id":"x0c0s0b0n1","partitionName":"","groupLabels":["a"]}]`},
		{name: "by nid range", method: "GET", path: "/memberships?nid_start=5&nid_end=9", status: 200,
			want: `[{"id":"x0c0s0b0n1","partitionName":"","groupLabels":["a"]}]`},
		{name: "by partition", method: "GET", path: "/memberships?partition=p1", status: 200,
			want: `[{"id":"x0c0s0b0n0","partitionName":"p1","groupLabels":["a","b"]}]`},
		{name: "no partition, group a", method: "GET", path: "/memberships?partition=NULL&group=a", status: 200,
			want: `[{"id":"x0c0s0b0n1","partitionName":"","groupLabels":["a"]}]`},
		{name: "not in group a", method: "GET", path: "/memberships?group=!a", status: 200,
			want: `[{"id":"x0c0s0b0","partitionName":"","groupLabels":[]}]`},
		{name: "type negated", method: "GET", path: "/memberships?type=!node", status: 200,
			want: `[{"id":"x0c0s0b0","partitionName":"","groupLabels":[]}]`},
		{name: "bad state", method: "GET", path: "/memberships?state=sleepy", status: 400, detail: "bad query param: Argument was not a valid HMS State"},
		{name: "bad nid", method: "GET", path: "/memberships?nid=seven", status: 400, detail: "bad query param: a required argument was not an integer"},
		{name: "bad type", method: "GET", path: "/memberships?type=toaster", status: 400, detail: "bad query param: Argument was not a valid HMS Type"},
		{name: "unknown param ignored", method: "GET", path: "/memberships?colour=red&id=x0c0s0b0", status: 200,
			want: `[{"id":"x0c0s0b0","partitionName":"","groupLabels":[]}]`},
		{name: "one", method: "GET", path: "/memberships/x00c0s0b0n0", status: 200,
			want: `{"id":"x0c0s0b0n0","partitionName":"p1","groupLabels":["a","b"]}`},
		{name: "one unknown", method: "GET", path: "/memberships/x5c0s0b0n0", status: 404},
		{name: "one bad", method: "GET", path: "/memberships/nope", status: 400, detail: "xname"},
	})
	t.Run("deleted component leaves its groups", func(t *testing.T) {
		if err := s.DeleteComponent(t.Context(), "x0c0s0b0n0"); err != nil {
			t.Fatal(err)
		}
		_, body := glDo(t, srv, "GET", "/groups/a/members", "")
		glJSONEqual(t, body, `{"ids":["x0c0s0b0n1"]}`)
		_, body = glDo(t, srv, "GET", "/partitions/p1", "")
		glJSONEqual(t, body, `{"name":"p1","description":"","members":{"ids":[]}}`)
	})
}

// TestPartitionRace has many clients claim the same component for different
// partitions at once: exactly one may win, and the losers create nothing.
func TestPartitionRace(t *testing.T) {
	s, srv := glNewTestAPI(t, nil)
	glAddComponents(t, s, "x0c0s0b0n0")
	const n = 16
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+Base+"/partitions",
				strings.NewReader(`{"name":"p`+strconv.Itoa(i)+`","members":{"ids":["x0c0s0b0n0"]}}`))
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		})
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for st := range statuses {
		count[st]++
	}
	if d := cmp.Diff(map[int]int{201: 1, 409: n - 1}, count); d != "" {
		t.Errorf("statuses (-want +got):\n%s", d)
	}
	_, body := glDo(t, srv, "GET", "/partitions/names", "")
	var names []string
	if err := json.Unmarshal(body, &names); err != nil || len(names) != 1 {
		t.Errorf("partitions after the race: %s (want exactly one)", body)
	}
}

// TestMembershipFilterNULLIsOred: NULL (in no partition / no group) is one
// more value of its filter, ORed with the named ones; !NULL excludes; a
// negated NID is refused as on /State/Components.
func TestMembershipFilterNULLIsOred(t *testing.T) {
	_, srv := glNewTestAPI(t, nil)
	glRunSteps(t, srv, []glStep{
		{name: "components", method: "POST", path: "/State/Components", status: 204,
			body: `{"Components":[{"ID":"x0c0s0b0n0","State":"On","NID":1},{"ID":"x0c0s0b0n1","State":"On","NID":2},{"ID":"x0c0s1b0n0","State":"On"}]}`},
		{name: "partition", method: "POST", path: "/partitions", status: 201, body: `{"name":"p1","members":{"ids":["x0c0s0b0n0"]}}`},
		{name: "partition 2", method: "POST", path: "/partitions", status: 201, body: `{"name":"p2","members":{"ids":["x0c0s0b0n1"]}}`},
		{name: "group", method: "POST", path: "/groups", status: 201, body: `{"label":"g1","members":{"ids":["x0c0s0b0n1"]}}`},
		{name: "p1 or none", method: "GET", path: "/memberships?partition=p1&partition=NULL", status: 200,
			want: `[{"id":"x0c0s0b0n0","partitionName":"p1","groupLabels":[]},{"id":"x0c0s1b0n0","partitionName":"","groupLabels":[]}]`},
		{name: "g1 or none", method: "GET", path: "/memberships?group=g1&group=NULL", status: 200,
			want: `[{"id":"x0c0s0b0n0","partitionName":"p1","groupLabels":[]},{"id":"x0c0s0b0n1","partitionName":"p2","groupLabels":["g1"]},{"id":"x0c0s1b0n0","partitionName":"","groupLabels":[]}]`},
		{name: "in some partition", method: "GET", path: "/memberships?partition=!NULL", status: 200,
			want: `[{"id":"x0c0s0b0n0","partitionName":"p1","groupLabels":[]},{"id":"x0c0s0b0n1","partitionName":"p2","groupLabels":["g1"]}]`},
		{name: "negated nid", method: "GET", path: "/memberships?nid=!1", status: 400, detail: "bad query param: a required argument was not an integer"},
	})
}
