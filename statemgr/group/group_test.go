package group_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

func TestGroupsAPI(t *testing.T) { pg.EachDB(t, testGroupsAPI) }

func testGroupsAPI(t *testing.T, db testpeer.DB) {
	s, srv := hsmtest.OpenAPIOn(t, db, nil)
	hsmtest.AddComponents(t, s, "x0c0s0b0n0", "x0c0s0b0n1", "x0c0s1b0n0", "x0c0s1b0n1", "x0c0s0b0")
	hsmtest.RunSteps(t, srv, []hsmtest.Step{
		{Name: "create", Method: "POST", Path: "/groups", Status: 201,
			Body: `{"label":"Blue","description":"d","tags":["T1"],"members":{"ids":["x0c0s0b0n0","x00c0s0b0n1","x0c0s0b0n0"]}}`,
			Want: `[{"URI":"/hsm/v2/groups/blue"}]`},
		{Name: "get", Method: "GET", Path: "/groups/BLUE", Status: 200,
			Want: `{"label":"blue","description":"d","tags":["t1"],"members":{"ids":["x0c0s0b0n0","x0c0s0b0n1"]}}`},
		{Name: "duplicate label", Method: "POST", Path: "/groups", Body: `{"label":"blue"}`, Status: 409, Detail: "label"},
		{Name: "bad label", Method: "POST", Path: "/groups", Body: `{"label":"bad label!"}`, Status: 400, Detail: "label"},
		{Name: "missing label", Method: "POST", Path: "/groups", Body: `{"description":"x"}`, Status: 400, Detail: "label"},
		{Name: "bad tag", Method: "POST", Path: "/groups", Body: `{"label":"red","tags":["ok","no/slash"]}`, Status: 400, Detail: "tags[1]"},
		{Name: "unknown member", Method: "POST", Path: "/groups", Status: 400, Detail: "members.ids[1]",
			Body: `{"label":"red","members":{"ids":["x0c0s0b0n0","x9c0s0b0n0"]}}`},
		{Name: "bad member xname", Method: "POST", Path: "/groups", Body: `{"label":"red","members":{"ids":["node7"]}}`, Status: 400, Detail: "members.ids[0]"},
		{Name: "malformed json", Method: "POST", Path: "/groups", Body: `{"label":`, Status: 400},
		{Name: "wrong type", Method: "POST", Path: "/groups", Body: `{"label":"red","tags":"t"}`, Status: 400, Detail: "tags"},
		{Name: "failed creates stored nothing", Method: "GET", Path: "/groups/red", Status: 404},
		{Name: "labels", Method: "GET", Path: "/groups/labels", Status: 200, Want: `["blue"]`},
		{Name: "patch description", Method: "PATCH", Path: "/groups/blue", Body: `{"description":"new"}`, Status: 204},
		{Name: "patch kept tags", Method: "GET", Path: "/groups/blue", Status: 200,
			Want: `{"label":"blue","description":"new","tags":["t1"],"members":{"ids":["x0c0s0b0n0","x0c0s0b0n1"]}}`},
		{Name: "patch tags", Method: "PATCH", Path: "/groups/blue", Body: `{"tags":["A","b"]}`, Status: 204},
		{Name: "patch bad tag", Method: "PATCH", Path: "/groups/blue", Body: `{"tags":["a b"]}`, Status: 400, Detail: "tags[0]"},
		{Name: "patch missing", Method: "PATCH", Path: "/groups/nosuch", Body: `{"description":"x"}`, Status: 404},
		{Name: "filter tag", Method: "GET", Path: "/groups?tag=a", Status: 200,
			Want: `[{"label":"blue","description":"new","tags":["a","b"],"members":{"ids":["x0c0s0b0n0","x0c0s0b0n1"]}}]`},
		{Name: "filter tag none", Method: "GET", Path: "/groups?tag=zzz", Status: 200, Want: `[]`},
		{Name: "filter group none", Method: "GET", Path: "/groups?group=green", Status: 200, Want: `[]`},
		{Name: "filter bad group", Method: "GET", Path: "/groups?group=a*b", Status: 400, Detail: "group"},
		{Name: "add member", Method: "POST", Path: "/groups/blue/members", Body: `{"id":"x0c0s1b0n0"}`, Status: 201,
			Want: `[{"URI":"/hsm/v2/groups/blue/members/x0c0s1b0n0"}]`},
		{Name: "add member again", Method: "POST", Path: "/groups/blue/members", Body: `{"id":"x0c0s1b0n0"}`, Status: 409},
		{Name: "add unknown component", Method: "POST", Path: "/groups/blue/members", Body: `{"id":"x9c0s0b0n0"}`, Status: 400, Detail: "id"},
		{Name: "add bad xname", Method: "POST", Path: "/groups/blue/members", Body: `{"id":"bogus"}`, Status: 400, Detail: "id"},
		{Name: "add to missing group", Method: "POST", Path: "/groups/nosuch/members", Body: `{"id":"x0c0s1b0n0"}`, Status: 404},
		{Name: "members", Method: "GET", Path: "/groups/blue/members", Status: 200,
			Want: `{"ids":["x0c0s0b0n0","x0c0s0b0n1","x0c0s1b0n0"]}`},
		{Name: "remove member", Method: "DELETE", Path: "/groups/blue/members/x0c0s1b0n0", Status: 200,
			Want: `{"code":0,"message":"deleted 1 entry"}`},
		{Name: "remove member again", Method: "DELETE", Path: "/groups/blue/members/x0c0s1b0n0", Status: 404},
		{Name: "remove bad xname", Method: "DELETE", Path: "/groups/blue/members/zz", Status: 400, Detail: "xname_id"},
		{Name: "members of missing", Method: "GET", Path: "/groups/nosuch/members", Status: 404},
		{Name: "empty group", Method: "POST", Path: "/groups", Body: `{"label":"empty"}`, Status: 201},
		{Name: "empty members", Method: "GET", Path: "/groups/empty", Status: 200, Want: `{"label":"empty","description":"","members":{"ids":[]}}`},
		{Name: "delete", Method: "DELETE", Path: "/groups/empty", Status: 200, Want: `{"code":0,"message":"deleted 1 entry"}`},
		{Name: "delete again", Method: "DELETE", Path: "/groups/empty", Status: 404},
		{Name: "list", Method: "GET", Path: "/groups", Status: 200,
			Want: `[{"label":"blue","description":"new","tags":["a","b"],"members":{"ids":["x0c0s0b0n0","x0c0s0b0n1"]}}]`},
	})
}

func TestExclusiveGroups(t *testing.T) { pg.EachDB(t, testExclusiveGroups) }

func testExclusiveGroups(t *testing.T, db testpeer.DB) {
	s, srv := hsmtest.OpenAPIOn(t, db, nil)
	hsmtest.AddComponents(t, s, "x0c0s0b0n0", "x0c0s0b0n1", "x0c0s1b0n0")
	hsmtest.RunSteps(t, srv, []hsmtest.Step{
		{Name: "first exclusive", Method: "POST", Path: "/groups", Status: 201,
			Body: `{"label":"e1","exclusiveGroup":"Ex","members":{"ids":["x0c0s0b0n0"]}}`},
		{Name: "get shows exclusive", Method: "GET", Path: "/groups/e1", Status: 200,
			Want: `{"label":"e1","description":"","exclusiveGroup":"ex","members":{"ids":["x0c0s0b0n0"]}}`},
		{Name: "second exclusive overlapping", Method: "POST", Path: "/groups", Status: 409, Detail: "e1",
			Body: `{"label":"e2","exclusiveGroup":"ex","members":{"ids":["x0c0s0b0n1","x0c0s0b0n0"]}}`},
		{Name: "nothing created", Method: "GET", Path: "/groups/e2", Status: 404},
		{Name: "second exclusive disjoint", Method: "POST", Path: "/groups", Status: 201,
			Body: `{"label":"e2","exclusiveGroup":"ex","members":{"ids":["x0c0s0b0n1"]}}`},
		{Name: "add overlapping member", Method: "POST", Path: "/groups/e2/members", Body: `{"id":"x0c0s0b0n0"}`, Status: 409, Detail: "e1"},
		{Name: "other exclusive label is fine", Method: "POST", Path: "/groups", Status: 201,
			Body: `{"label":"f1","exclusiveGroup":"other","members":{"ids":["x0c0s0b0n0"]}}`},
		{Name: "plain group is fine", Method: "POST", Path: "/groups", Status: 201,
			Body: `{"label":"plain","members":{"ids":["x0c0s0b0n0","x0c0s0b0n1"]}}`},
		{Name: "delete holder", Method: "DELETE", Path: "/groups/e1", Status: 200},
		{Name: "now it may move", Method: "POST", Path: "/groups/e2/members", Body: `{"id":"x0c0s0b0n0"}`, Status: 201},
		{Name: "membership", Method: "GET", Path: "/memberships/x0c0s0b0n0", Status: 200,
			Want: `{"id":"x0c0s0b0n0","partitionName":"","groupLabels":["e2","f1","plain"]}`},
	})
}

func TestPartitionsAPI(t *testing.T) { pg.EachDB(t, testPartitionsAPI) }

func testPartitionsAPI(t *testing.T, db testpeer.DB) {
	s, srv := hsmtest.OpenAPIOn(t, db, nil)
	hsmtest.AddComponents(t, s, "x0c0s0b0n0", "x0c0s0b0n1", "x0c0s1b0n0", "x0c0s1b0n1")
	hsmtest.RunSteps(t, srv, []hsmtest.Step{
		{Name: "create p1", Method: "POST", Path: "/partitions", Status: 201, Want: `[{"URI":"/hsm/v2/partitions/p1"}]`,
			Body: `{"name":"p1","description":"one","tags":["t"],"members":{"ids":["x0c0s0b0n0","x0c0s0b0n1"]}}`},
		{Name: "overlapping p2", Method: "POST", Path: "/partitions", Status: 409, Detail: "p1",
			Body: `{"name":"p2","members":{"ids":["x0c0s1b0n0","x0c0s0b0n1"]}}`},
		{Name: "p2 not created", Method: "GET", Path: "/partitions/p2", Status: 404},
		{Name: "x0c0s1b0n0 untouched", Method: "GET", Path: "/memberships/x0c0s1b0n0", Status: 200,
			Want: `{"id":"x0c0s1b0n0","partitionName":"","groupLabels":[]}`},
		{Name: "create p2", Method: "POST", Path: "/partitions", Status: 201, Body: `{"name":"p2","members":{"ids":["x0c0s1b0n0"]}}`},
		{Name: "duplicate name", Method: "POST", Path: "/partitions", Status: 409, Body: `{"name":"p2"}`, Detail: "name"},
		{Name: "reserved name", Method: "POST", Path: "/partitions", Status: 400, Body: `{"name":"NULL"}`, Detail: "name"},
		{Name: "missing name", Method: "POST", Path: "/partitions", Status: 400, Body: `{}`, Detail: "name"},
		{Name: "group may not take partition name", Method: "POST", Path: "/groups", Status: 409, Body: `{"label":"p1"}`, Detail: "partition"},
		{Name: "move member in", Method: "POST", Path: "/partitions/p2/members", Status: 409, Body: `{"id":"x0c0s0b0n0"}`, Detail: "p1"},
		{Name: "free member in", Method: "POST", Path: "/partitions/p2/members", Status: 201, Body: `{"id":"x0c0s1b0n1"}`,
			Want: `[{"URI":"/hsm/v2/partitions/p2/members/x0c0s1b0n1"}]`},
		{Name: "names", Method: "GET", Path: "/partitions/names", Status: 200, Want: `["p1","p2"]`},
		{Name: "get", Method: "GET", Path: "/partitions/p1", Status: 200,
			Want: `{"name":"p1","description":"one","tags":["t"],"members":{"ids":["x0c0s0b0n0","x0c0s0b0n1"]}}`},
		{Name: "list filtered", Method: "GET", Path: "/partitions?partition=p2", Status: 200,
			Want: `[{"name":"p2","description":"","members":{"ids":["x0c0s1b0n0","x0c0s1b0n1"]}}]`},
		{Name: "list by tag", Method: "GET", Path: "/partitions?tag=t", Status: 200,
			Want: `[{"name":"p1","description":"one","tags":["t"],"members":{"ids":["x0c0s0b0n0","x0c0s0b0n1"]}}]`},
		{Name: "patch", Method: "PATCH", Path: "/partitions/p2", Status: 204, Body: `{"description":"two","tags":[]}`},
		{Name: "patched", Method: "GET", Path: "/partitions/p2", Status: 200,
			Want: `{"name":"p2","description":"two","members":{"ids":["x0c0s1b0n0","x0c0s1b0n1"]}}`},
		{Name: "partition is not a group", Method: "GET", Path: "/groups/p2", Status: 404},
		{Name: "members", Method: "GET", Path: "/partitions/p2/members", Status: 200, Want: `{"ids":["x0c0s1b0n0","x0c0s1b0n1"]}`},
		{Name: "remove member", Method: "DELETE", Path: "/partitions/p1/members/x0c0s0b0n0", Status: 200},
		{Name: "removed member may move", Method: "POST", Path: "/partitions/p2/members", Status: 201, Body: `{"id":"x0c0s0b0n0"}`},
		{Name: "delete", Method: "DELETE", Path: "/partitions/p1", Status: 200},
		{Name: "delete missing", Method: "DELETE", Path: "/partitions/p1", Status: 404},
		{Name: "freed by delete", Method: "POST", Path: "/partitions", Status: 201, Body: `{"name":"p3","members":{"ids":["x0c0s0b0n1"]}}`},
	})
}

func TestGroupPartitionFilter(t *testing.T) { pg.EachDB(t, testGroupPartitionFilter) }

func testGroupPartitionFilter(t *testing.T, db testpeer.DB) {
	s, srv := hsmtest.OpenAPIOn(t, db, nil)
	hsmtest.AddComponents(t, s, "x0c0s0b0n0", "x0c0s0b0n1", "x0c0s1b0n0")
	hsmtest.RunSteps(t, srv, []hsmtest.Step{
		{Name: "p1", Method: "POST", Path: "/partitions", Status: 201, Body: `{"name":"p1","members":{"ids":["x0c0s0b0n0"]}}`},
		{Name: "p2", Method: "POST", Path: "/partitions", Status: 201, Body: `{"name":"p2","members":{"ids":["x0c0s0b0n1"]}}`},
		{Name: "g", Method: "POST", Path: "/groups", Status: 201, Body: `{"label":"g","members":{"ids":["x0c0s0b0n0","x0c0s0b0n1","x0c0s1b0n0"]}}`},
		{Name: "group in p1", Method: "GET", Path: "/groups/g?partition=p1", Status: 200,
			Want: `{"label":"g","description":"","members":{"ids":["x0c0s0b0n0"]}}`},
		{Name: "members in p2", Method: "GET", Path: "/groups/g/members?partition=p2", Status: 200, Want: `{"ids":["x0c0s0b0n1"]}`},
		{Name: "members in no partition", Method: "GET", Path: "/groups/g/members?partition=NULL", Status: 200, Want: `{"ids":["x0c0s1b0n0"]}`},
		{Name: "bad partition", Method: "GET", Path: "/groups/g/members?partition=p%2A", Status: 400, Detail: "partition"},
	})
}

func TestMembershipsAPI(t *testing.T) { pg.EachDB(t, testMembershipsAPI) }

func testMembershipsAPI(t *testing.T, db testpeer.DB) {
	s, srv := hsmtest.OpenAPIOn(t, db, nil)
	hsmtest.AddComponents(t, s, "x0c0s0b0n0", "x0c0s0b0n1", "x0c0s0b0")
	if _, err := s.DB.W.Exec(`UPDATE components SET nid = 7, state = 'Off' WHERE id = 'x0c0s0b0n1'`); err != nil {
		t.Fatal(err)
	}
	if err := s.LoadComponents(t.Context()); err != nil {
		t.Fatal(err)
	}
	hsmtest.RunSteps(t, srv, []hsmtest.Step{
		{Name: "p1", Method: "POST", Path: "/partitions", Status: 201, Body: `{"name":"p1","members":{"ids":["x0c0s0b0n0"]}}`},
		{Name: "a", Method: "POST", Path: "/groups", Status: 201, Body: `{"label":"a","members":{"ids":["x0c0s0b0n0","x0c0s0b0n1"]}}`},
		{Name: "b", Method: "POST", Path: "/groups", Status: 201, Body: `{"label":"b","members":{"ids":["x0c0s0b0n0"]}}`},
		{Name: "all", Method: "GET", Path: "/memberships", Status: 200, Want: `[
			{"id":"x0c0s0b0","partitionName":"","groupLabels":[]},
			{"id":"x0c0s0b0n0","partitionName":"p1","groupLabels":["a","b"]},
			{"id":"x0c0s0b0n1","partitionName":"","groupLabels":["a"]}]`},
		{Name: "by type", Method: "GET", Path: "/memberships?type=nodebmc", Status: 200,
			Want: `[{"id":"x0c0s0b0","partitionName":"","groupLabels":[]}]`},
		{Name: "by id repeated", Method: "GET", Path: "/memberships?id=x0c0s0b0n1&id=x0c0s0b0", Status: 200,
			Want: `[{"id":"x0c0s0b0","partitionName":"","groupLabels":[]},{"id":"x0c0s0b0n1","partitionName":"","groupLabels":["a"]}]`},
		{Name: "by state", Method: "GET", Path: "/memberships?state=off", Status: 200,
			Want: `[{"id":"x0c0s0b0n1","partitionName":"","groupLabels":["a"]}]`},
		{Name: "by nid range", Method: "GET", Path: "/memberships?nid_start=5&nid_end=9", Status: 200,
			Want: `[{"id":"x0c0s0b0n1","partitionName":"","groupLabels":["a"]}]`},
		{Name: "by partition", Method: "GET", Path: "/memberships?partition=p1", Status: 200,
			Want: `[{"id":"x0c0s0b0n0","partitionName":"p1","groupLabels":["a","b"]}]`},
		{Name: "no partition, group a", Method: "GET", Path: "/memberships?partition=NULL&group=a", Status: 200,
			Want: `[{"id":"x0c0s0b0n1","partitionName":"","groupLabels":["a"]}]`},
		{Name: "not in group a", Method: "GET", Path: "/memberships?group=!a", Status: 200,
			Want: `[{"id":"x0c0s0b0","partitionName":"","groupLabels":[]}]`},
		{Name: "type negated", Method: "GET", Path: "/memberships?type=!node", Status: 200,
			Want: `[{"id":"x0c0s0b0","partitionName":"","groupLabels":[]}]`},
		{Name: "bad state", Method: "GET", Path: "/memberships?state=sleepy", Status: 400, Detail: "bad query param: Argument was not a valid HMS State"},
		{Name: "bad nid", Method: "GET", Path: "/memberships?nid=seven", Status: 400, Detail: "bad query param: a required argument was not an integer"},
		{Name: "bad type", Method: "GET", Path: "/memberships?type=toaster", Status: 400, Detail: "bad query param: Argument was not a valid HMS Type"},
		{Name: "unknown param ignored", Method: "GET", Path: "/memberships?colour=red&id=x0c0s0b0", Status: 200,
			Want: `[{"id":"x0c0s0b0","partitionName":"","groupLabels":[]}]`},
		{Name: "one", Method: "GET", Path: "/memberships/x00c0s0b0n0", Status: 200,
			Want: `{"id":"x0c0s0b0n0","partitionName":"p1","groupLabels":["a","b"]}`},
		{Name: "one unknown", Method: "GET", Path: "/memberships/x5c0s0b0n0", Status: 404},
		{Name: "one bad", Method: "GET", Path: "/memberships/nope", Status: 400, Detail: "xname"},
	})
	t.Run("deleted component leaves its groups", func(t *testing.T) {
		if err := component.NewStore(s).DeleteComponent(t.Context(), "x0c0s0b0n0"); err != nil {
			t.Fatal(err)
		}
		_, body := hsmtest.Do(t, srv, "GET", "/groups/a/members", "")
		hsmtest.JSONEqual(t, body, `{"ids":["x0c0s0b0n1"]}`)
		_, body = hsmtest.Do(t, srv, "GET", "/partitions/p1", "")
		hsmtest.JSONEqual(t, body, `{"name":"p1","description":"","members":{"ids":[]}}`)
	})
}

// TestPartitionRace has many clients claim the same component for different
// partitions at once: exactly one may win, and the losers create nothing.
func TestPartitionRace(t *testing.T) { pg.EachDB(t, testPartitionRace) }

func testPartitionRace(t *testing.T, db testpeer.DB) {
	s, srv := hsmtest.OpenAPIOn(t, db, nil)
	hsmtest.AddComponents(t, s, "x0c0s0b0n0")
	const n = 16
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+hsm.Base+"/partitions",
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
	_, body := hsmtest.Do(t, srv, "GET", "/partitions/names", "")
	var names []string
	if err := json.Unmarshal(body, &names); err != nil || len(names) != 1 {
		t.Errorf("partitions after the race: %s (want exactly one)", body)
	}
}

// TestMembershipFilterNULLIsOred: NULL (in no partition / no group) is one
// more value of its filter, ORed with the named ones; !NULL excludes; a
// negated NID is refused as on /State/Components.
func TestMembershipFilterNULLIsOred(t *testing.T) { pg.EachDB(t, testMembershipFilterNULLIsOred) }

func testMembershipFilterNULLIsOred(t *testing.T, db testpeer.DB) {
	_, srv := hsmtest.OpenAPIOn(t, db, nil)
	hsmtest.RunSteps(t, srv, []hsmtest.Step{
		{Name: "components", Method: "POST", Path: "/State/Components", Status: 204,
			Body: `{"Components":[{"ID":"x0c0s0b0n0","State":"On","NID":1},{"ID":"x0c0s0b0n1","State":"On","NID":2},{"ID":"x0c0s1b0n0","State":"On"}]}`},
		{Name: "partition", Method: "POST", Path: "/partitions", Status: 201, Body: `{"name":"p1","members":{"ids":["x0c0s0b0n0"]}}`},
		{Name: "partition 2", Method: "POST", Path: "/partitions", Status: 201, Body: `{"name":"p2","members":{"ids":["x0c0s0b0n1"]}}`},
		{Name: "group", Method: "POST", Path: "/groups", Status: 201, Body: `{"label":"g1","members":{"ids":["x0c0s0b0n1"]}}`},
		{Name: "p1 or none", Method: "GET", Path: "/memberships?partition=p1&partition=NULL", Status: 200,
			Want: `[{"id":"x0c0s0b0n0","partitionName":"p1","groupLabels":[]},{"id":"x0c0s1b0n0","partitionName":"","groupLabels":[]}]`},
		{Name: "g1 or none", Method: "GET", Path: "/memberships?group=g1&group=NULL", Status: 200,
			Want: `[{"id":"x0c0s0b0n0","partitionName":"p1","groupLabels":[]},{"id":"x0c0s0b0n1","partitionName":"p2","groupLabels":["g1"]},{"id":"x0c0s1b0n0","partitionName":"","groupLabels":[]}]`},
		{Name: "in some partition", Method: "GET", Path: "/memberships?partition=!NULL", Status: 200,
			Want: `[{"id":"x0c0s0b0n0","partitionName":"p1","groupLabels":[]},{"id":"x0c0s0b0n1","partitionName":"p2","groupLabels":["g1"]}]`},
		{Name: "negated nid", Method: "GET", Path: "/memberships?nid=!1", Status: 400, Detail: "bad query param: a required argument was not an integer"},
	})
}
