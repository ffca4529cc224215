package statemgr_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

// seedGroups is seed plus group blue {n0 of s0, n0 of s1}, group red {n1 of
// s1} and partition p1 {both nodes of s1}.
func seedGroups(t *testing.T, a *hsmtest.Server) {
	t.Helper()
	hsmtest.Seed(t, a)
	a.Must(201, "POST", "/groups", map[string]any{"label": "blue", "members": map[string]any{"ids": []string{"x0c0s0b0n0", "x0c0s1b0n0"}}})
	a.Must(201, "POST", "/groups", map[string]any{"label": "red", "members": map[string]any{"ids": []string{"x0c0s1b0n1"}}})
	a.Must(201, "POST", "/partitions", map[string]any{"name": "p1", "members": map[string]any{"ids": []string{"x0c0s1b0n0", "x0c0s1b0n1"}}})
}

// listingIDs returns the IDs each listing answers for query: components,
// memberships.
func listingIDs(t *testing.T, a *hsmtest.Server, query string) (comps, members []string) {
	t.Helper()
	comps = hsmtest.IDsOf(a.List(query))
	var ms []hsm.Membership
	if err := json.Unmarshal(a.Must(200, "GET", "/memberships"+query, nil), &ms); err != nil {
		t.Fatal(err)
	}
	members = []string{}
	for _, m := range ms {
		members = append(members, m.ID)
	}
	return comps, members
}

// TestFilterListingsAgree is issue 10's table: the same query selects the
// same components on /State/Components and /memberships (hms-behavior 5.1:
// group and partition repeat and negate with "!", /memberships takes the same
// filters, unknown parameters are ignored).
func TestFilterListingsAgree(t *testing.T) { pg.EachDB(t, testFilterListingsAgree) }

func testFilterListingsAgree(t *testing.T, db testpeer.DB) {
	a := newServerOn(t, db, core.Config{})
	seedGroups(t, a)
	all := []string{"x0c0s0b0", "x0c0s0b0n0", "x0c0s0b0n1", "x0c0s1b0n0", "x0c0s1b0n1"}
	tests := []struct {
		name, query string
		want        []string
	}{
		{name: "in no group", query: "?group=NULL", want: []string{"x0c0s0b0", "x0c0s0b0n1"}},
		{name: "in some group", query: "?group=!null", want: []string{"x0c0s0b0n0", "x0c0s1b0n0", "x0c0s1b0n1"}},
		{name: "not in blue", query: "?group=!blue", want: []string{"x0c0s0b0", "x0c0s0b0n1", "x0c0s1b0n1"}},
		{name: "groups ORed", query: "?group=blue&group=red", want: []string{"x0c0s0b0n0", "x0c0s1b0n0", "x0c0s1b0n1"}},
		{name: "group or none", query: "?group=red&group=NULL", want: []string{"x0c0s0b0", "x0c0s0b0n1", "x0c0s1b0n1"}},
		{name: "partitions ORed with NULL", query: "?partition=p1&partition=NULL", want: all},
		{name: "in no partition", query: "?partition=null&type=Node", want: []string{"x0c0s0b0n0", "x0c0s0b0n1"}},
		{name: "not in p1", query: "?partition=!p1", want: []string{"x0c0s0b0", "x0c0s0b0n0", "x0c0s0b0n1"}},
		{name: "partition and group", query: "?partition=P1&group=BLUE", want: []string{"x0c0s1b0n0"}},
		{name: "unknown group", query: "?group=nosuch", want: []string{}},
		{name: "unknown parameter ignored", query: "?bogus=1", want: all},
		{name: "unknown parameter beside a filter", query: "?bogus=1&state=Off", want: []string{"x0c0s0b0n1"}},
		{name: "parameter names in any case", query: "?TYPE=NodeBMC", want: []string{"x0c0s0b0"}},
		{name: "nettype", query: "?nettype=Sling", want: []string{}},
		{name: "nettype negated", query: "?nettype=!sling&type=NodeBMC", want: []string{"x0c0s0b0"}},
		{name: "nid or nid range", query: "?nid=1&nid_start=3&nid_end=3", want: []string{"x0c0s0b0n0", "x0c0s1b0n0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			comps, members := listingIDs(t, a, tc.query)
			if d := cmp.Diff(tc.want, comps); d != "" {
				t.Errorf("GET /State/Components%s (-want +got):\n%s", tc.query, d)
			}
			if d := cmp.Diff(tc.want, members); d != "" {
				t.Errorf("GET /memberships%s (-want +got):\n%s", tc.query, d)
			}
		})
	}
}

// TestFilterBadValues: a known filter with a bad value is 400 on every
// listing, with HSM's detail (hms-messages 1.2, 1.3).
func TestFilterBadValues(t *testing.T) { pg.EachDB(t, testFilterBadValues) }

func testFilterBadValues(t *testing.T, db testpeer.DB) {
	a := newServerOn(t, db, core.Config{})
	seedGroups(t, a)
	tests := []struct{ query, detail string }{
		{query: "?role=NoSuchRole", detail: "bad query param: Argument was not a valid HMS Role"},
		{query: "?id=BADID", detail: "bad query param: Argument was not a valid xname ID"},
		{query: "?state=Sleepy", detail: "bad query param: Argument was not a valid HMS State"},
		{query: "?type=toaster", detail: "bad query param: Argument was not a valid HMS Type"},
		{query: "?flag=purple", detail: "bad query param: Argument was not a valid HMS Flag"},
		{query: "?subrole=chef", detail: "bad query param: Argument was not a valid HMS SubRole"},
		{query: "?arch=z80", detail: "bad query param: Argument was not a valid HMS Arch"},
		{query: "?class=desert", detail: "bad query param: Argument was not a valid HMS Class"},
		{query: "?enabled=maybe", detail: "bad query param: a required argument did not match any valid input"},
		{query: "?nid_start=one", detail: "bad query param: a required argument was not an integer"},
		{query: "?nettype=carrierpigeon", detail: "bad query param: Argument was not valid"},
		{query: "?group=bl%20ue", detail: "bad query param: group or partition field has invalid characters"},
	}
	for _, tc := range tests {
		for _, path := range []string{"/State/Components", "/memberships", "/State/Components/Query/all"} {
			t.Run(path+tc.query, func(t *testing.T) {
				var p struct{ Detail string }
				if err := json.Unmarshal(a.Must(400, "GET", path+tc.query, nil), &p); err != nil {
					t.Fatal(err)
				}
				if p.Detail != tc.detail {
					t.Errorf("detail %q, want %q", p.Detail, tc.detail)
				}
			})
		}
	}
}

// TestFilterBodies: the JSON forms (POST /State/Components/Query, the locks
// calls) parse with the same parser and select the same components.
func TestFilterBodies(t *testing.T) { pg.EachDB(t, testFilterBodies) }

func testFilterBodies(t *testing.T, db testpeer.DB) {
	a := newServerOn(t, db, core.Config{})
	seedGroups(t, a)
	var l hsm.ComponentList
	body := map[string]any{"ComponentIDs": []string{"x0c0s0b0n0", "x0c0s0b0n1", "x0c0s1b0n1"}, "group": "!blue"}
	if err := json.Unmarshal(a.Must(200, "POST", "/State/Components/Query", body), &l); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"x0c0s0b0n1", "x0c0s1b0n1"}, hsmtest.IDsOf(l.Components)); d != "" {
		t.Errorf("POST Query group !blue (-want +got):\n%s", d)
	}
	var res hsm.LockResult
	lock := map[string]any{"Group": []string{"NULL"}, "Type": []string{"Node"}, "ProcessingModel": "flexible"}
	if err := json.Unmarshal(a.Must(200, "POST", "/locks/lock", lock), &res); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"x0c0s0b0n1"}, res.Success.ComponentIDs); d != "" {
		t.Errorf("lock Group NULL (-want +got):\n%s", d)
	}
	_, out := a.Do("POST", "/locks/lock", map[string]any{"Role": []string{"NoSuchRole"}})
	if !strings.Contains(string(out), `"detail":"Argument was not a valid HMS Role"`) {
		t.Errorf("lock with a bad role: %s", out)
	}
}

// TestLockStatusFilters: GET /locks/status takes the component filters
// shipped HSM gives it (type, state, role, subrole) with the same parser and
// ignores the others.
func TestLockStatusFilters(t *testing.T) { pg.EachDB(t, testLockStatusFilters) }

func testLockStatusFilters(t *testing.T, db testpeer.DB) {
	a := newServerOn(t, db, core.Config{})
	seedGroups(t, a)
	tests := []struct {
		query string
		want  []string
	}{
		{query: "?type=NodeBMC", want: []string{"x0c0s0b0"}},
		{query: "?role=service", want: []string{"x0c0s1b0n0"}},
		{query: "?state=!Ready&type=Node", want: []string{"x0c0s0b0n1", "x0c0s1b0n0"}},
		{query: "?group=blue&bogus=1&type=NodeBMC", want: []string{"x0c0s0b0"}},
	}
	for _, tc := range tests {
		var st hsm.LockStatusList
		if err := json.Unmarshal(a.Must(200, "GET", "/locks/status"+tc.query, nil), &st); err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for _, c := range st.Components {
			got = append(got, c.ID)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("GET /locks/status%s (-want +got):\n%s", tc.query, d)
		}
	}
	a.Must(400, "GET", "/locks/status?role=NoSuchRole", nil)
}

// FuzzFilterListingsAgree draws random filters over random components,
// groups and partitions: /State/Components and /memberships select the same
// components or fail with the same detail, and what they select is what
// refSelect, a plain reading of hms-behavior 5.1, selects.
func FuzzFilterListingsAgree(f *testing.F) {
	f.Add(uint64(1), "group=NULL&partition=!p1")
	f.Add(uint64(2), "state=!on&group=g1&group=!g2")
	f.Add(uint64(3), "nid_start=2&nid_end=5&role=!compute")
	f.Add(uint64(4), "partition=p2&partition=null&enabled=false&bogus=1")
	shared := newServer(f, core.Config{})
	f.Fuzz(func(t *testing.T, seed uint64, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		a := shared.For(t)
		fuzzPopulate(t, a, seed)
		flt, err := core.ParseFilter(q, a.Store.Vocab())
		path := "?" + q.Encode()
		cs, cbody := a.Do("GET", "/State/Components"+path, nil)
		ms, mbody := a.Do("GET", "/memberships"+path, nil)
		if cs != ms || (err == nil) != (cs == 200) {
			t.Fatalf("%s: components %d, memberships %d, parse error %v", path, cs, ms, err)
		}
		if err != nil {
			if string(cbody) != strings.Replace(string(mbody), "/memberships", "/State/Components", 1) {
				t.Fatalf("%s: different problems:\n%s\n%s", path, cbody, mbody)
			}
			return
		}
		_ = flt
		want := refSelect(t, a, q)
		var l hsm.ComponentList
		var m []hsm.Membership
		if json.Unmarshal(cbody, &l) != nil || json.Unmarshal(mbody, &m) != nil {
			t.Fatalf("%s: undecodable:\n%s\n%s", path, cbody, mbody)
		}
		got := hsmtest.IDsOf(l.Components)
		var gotM []string
		for _, x := range m {
			gotM = append(gotM, x.ID)
		}
		if !slices.Equal(want, got) || !slices.Equal(want, gotM) {
			t.Fatalf("%s: matcher %v, components %v, memberships %v", path, want, got, gotM)
		}
	})
}

// fuzzPopulate replaces every component, group and partition of a with a
// small random set drawn from seed.
func fuzzPopulate(t *testing.T, a *hsmtest.Server, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed>>7))
	if st, _ := a.Do("DELETE", "/State/Components", nil); st != 200 && st != 404 {
		t.Fatalf("delete components: %d", st)
	}
	for _, kind := range []struct{ path, names string }{{"/groups", "/labels"}, {"/partitions", "/names"}} {
		var names []string
		if err := json.Unmarshal(a.Must(200, "GET", kind.path+kind.names, nil), &names); err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			a.Must(200, "DELETE", kind.path+"/"+name, nil)
		}
	}
	states := []string{"On", "Off", "Ready", "Standby"}
	roles := []string{"Compute", "Service", "Storage"}
	var comps []map[string]any
	var nodes []string
	for i := range 4 + rng.IntN(12) {
		id := "x0c0s" + string(rune('0'+i%8)) + "b0n" + string(rune('0'+i/8))
		nodes = append(nodes, id)
		comps = append(comps, map[string]any{"ID": id, "State": states[rng.IntN(4)], "Role": roles[rng.IntN(3)],
			"NID": 1 + i, "Enabled": rng.IntN(4) > 0})
	}
	a.Must(204, "POST", "/State/Components", map[string]any{"Components": comps})
	for _, g := range []string{"g1", "g2"} {
		var members []string
		for _, id := range nodes {
			if rng.IntN(2) == 0 {
				members = append(members, id)
			}
		}
		a.Must(201, "POST", "/groups", map[string]any{"label": g, "members": map[string]any{"ids": members}})
	}
	perm := rng.Perm(len(nodes))
	cut := rng.IntN(len(nodes))
	for i, part := range []string{"p1", "p2"} {
		var members []string
		for _, j := range perm {
			if (j < cut) == (i == 0) && rng.IntN(3) > 0 {
				members = append(members, nodes[j])
			}
		}
		a.Must(201, "POST", "/partitions", map[string]any{"name": part, "members": map[string]any{"ids": members}})
	}
}

// refSelect is a reference reading of the component filters over the
// unfiltered listings, written apart from Filter: values of one parameter are
// ORed, "!" values exclude, "NULL" is "in none" for group and partition,
// nid values are ORed with the nid_start/nid_end ranges, parameter names
// are matched without regard to case and unknown ones are ignored. It
// assumes q parses.
func refSelect(t *testing.T, a *hsmtest.Server, q url.Values) []string {
	t.Helper()
	var ms []hsm.Membership
	if err := json.Unmarshal(a.Must(200, "GET", "/memberships", nil), &ms); err != nil {
		t.Fatal(err)
	}
	groupsOf := map[string]hsm.Membership{}
	for _, m := range ms {
		groupsOf[m.ID] = m
	}
	p := map[string][]string{}
	for k, vs := range q {
		p[strings.ToLower(k)] = append(p[strings.ToLower(k)], vs...)
	}
	var out []string
	for _, c := range a.List("") {
		if refMatch(p, c, groupsOf[c.ID]) {
			out = append(out, c.ID)
		}
	}
	return out
}

func refMatch(p map[string][]string, c hsm.Component, m hsm.Membership) bool {
	nid := ""
	if c.NID != nil {
		nid = strconv.Itoa(*c.NID)
	}
	fields := map[string][]string{"id": {c.ID}, "type": {c.Type}, "state": {c.State}, "flag": {c.Flag},
		"role": {c.Role}, "subrole": {c.SubRole}, "enabled": {strconv.FormatBool(*c.Enabled)},
		"softwarestatus": {c.SoftwareStatus}, "subtype": {c.Subtype}, "nettype": {c.NetType}, "arch": {c.Arch},
		"class": {c.Class}, "group": m.GroupLabels, "partition": {m.PartitionName}}
	if m.PartitionName == "" {
		fields["partition"] = nil
	}
	for name, have := range fields {
		var pos, neg []string
		for _, v := range p[name] {
			v = strings.TrimSpace(v)
			if v, ok := strings.CutPrefix(v, "!"); ok {
				neg = append(neg, v)
			} else if v != "" {
				pos = append(pos, v)
			}
		}
		is := func(v string) bool {
			if v == "" {
				return false
			}
			if (name == "group" || name == "partition") && strings.EqualFold(v, "null") {
				return len(have) == 0
			}
			return slices.ContainsFunc(have, func(h string) bool { return refEqual(name, v, h) })
		}
		if (len(pos) > 0 && !slices.ContainsFunc(pos, is)) || slices.ContainsFunc(neg, is) {
			return false
		}
	}
	nids, starts, ends := p["nid"], p["nid_start"], p["nid_end"]
	if len(nids)+len(starts)+len(ends) == 0 {
		return true
	}
	if nid == "" {
		return false
	}
	n, _ := strconv.Atoi(nid)
	for _, v := range nids {
		if x, _ := strconv.Atoi(strings.TrimSpace(v)); x == n {
			return true
		}
	}
	for i := 0; i < max(len(starts), len(ends)); i++ {
		lo, hi := math.MinInt, math.MaxInt
		if i < len(starts) {
			lo, _ = strconv.Atoi(strings.TrimSpace(starts[i]))
		}
		if i < len(ends) {
			hi, _ = strconv.Atoi(strings.TrimSpace(ends[i]))
		}
		if n >= lo && n <= hi {
			return true
		}
	}
	return false
}

// refEqual compares a filter value with a component's value of field name.
func refEqual(name, v, have string) bool {
	switch name {
	case "id":
		return xname.Normalize(v) == have
	case "type":
		t, _ := xname.ParseType(v)
		return string(t) == have
	case "enabled":
		b, _ := strconv.ParseBool(v)
		return strconv.FormatBool(b) == have
	case "flag":
		if strings.EqualFold(v, "warn") {
			v = "Warning"
		}
	}
	return strings.EqualFold(v, have)
}

// TestIgnoredParamsLogged: an ignored query parameter is named in a debug log line.
func TestIgnoredParamsLogged(t *testing.T) { pg.EachDB(t, testIgnoredParamsLogged) }

func testIgnoredParamsLogged(t *testing.T, db testpeer.DB) {
	c, _ := hsmtest.NewStoreOn(t, db, core.Config{})
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := httptest.NewServer(statemgr.NewAPI(&statemgr.Store{Store: c}, log, nil).Handler())
	t.Cleanup(srv.Close)
	for _, path := range []string{"/State/Components?bogus=1&type=Node", "/memberships?Colour=red", "/groups?tagg=x"} {
		resp, err := srv.Client().Get(srv.URL + statemgr.Base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %d", path, resp.StatusCode)
		}
	}
	for _, want := range []string{"params=[bogus]", "params=[Colour]", "params=[tagg]"} {
		if !strings.Contains(buf.String(), "msg=query_params_ignored") || !strings.Contains(buf.String(), want) {
			t.Errorf("log has no query_params_ignored line with %s:\n%s", want, buf.String())
		}
	}
}
