package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/sim"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// A snapshot is what the daemons and the sim show at one moment; a map is
// nil when its daemon did not answer (killed, restarting).
type snapshot struct {
	devices   map[string]sim.Status          // by node xname
	reds      map[string]string              // BMC xname -> reds endpoint state
	endpoints map[string]hsm.RedfishEndpoint // HSM's, by BMC xname
	comps     map[string]hsm.Component       // HSM's, by xname
	beating   map[string]bool                // hbtd, by node xname
	scns      map[string][]string            // states the subscriber got, by node
}

// A step is one observable effect of a workflow, for one node (and its BMC
// xname, the node's minus "n0"), read from one source (src: sim, reds,
// endpoints, comps, hbtd or scns). holds answers ok=false, known=false when
// the daemon it reads did not answer.
type step struct {
	name  string
	src   string
	holds func(s snapshot, node string) (ok, known bool)
}

// read fills the part of s that src names, reading it now.
func (w *watcher) read(ctx context.Context, src string, s *snapshot) {
	switch src {
	case "sim":
		s.devices = map[string]sim.Status{}
		for _, d := range w.sim.Devices() {
			s.devices[d.Node] = d
		}
	case "scns":
		s.scns = w.sub.states()
	case "reds":
		var eps struct {
			Endpoints []struct{ Xname, State string }
		}
		if err := getJSON(ctx, w.suite.client(), w.suite.url("reds")+"/v1/endpoints", &eps); err == nil {
			s.reds = map[string]string{}
			for _, e := range eps.Endpoints {
				s.reds[e.Xname] = e.State
			}
		}
	case "endpoints":
		if rfs, err := w.hsm.RedfishEndpoints(ctx, nil); err == nil {
			s.endpoints = map[string]hsm.RedfishEndpoint{}
			for _, e := range rfs {
				s.endpoints[e.ID] = e
			}
		}
	case "comps":
		if cs, err := w.hsm.Components(ctx, nil); err == nil {
			s.comps = map[string]hsm.Component{}
			for _, c := range cs {
				s.comps[c.ID] = c
			}
		}
	case "hbtd":
		if st, err := w.hbtd.States(ctx, w.nodes); err == nil {
			s.beating = map[string]bool{}
			for _, h := range st {
				s.beating[h.XName] = h.Heartbeating
			}
		}
	}
}

// take reads the source of each step, the last step's first: an effect
// read later than its cause's source cannot appear without the cause (the
// reads are not one atomic snapshot). It returns one snapshot per step.
func (w *watcher) take(ctx context.Context) []snapshot {
	out := make([]snapshot, len(w.steps))
	for i := len(w.steps) - 1; i >= 0; i-- {
		if i < len(w.steps)-1 && w.steps[i].src == w.steps[i+1].src {
			out[i] = out[i+1]
			continue
		}
		w.read(ctx, w.steps[i].src, &out[i])
	}
	return out
}

// all reads every source once.
func (w *watcher) all(ctx context.Context) snapshot {
	var s snapshot
	for _, src := range []string{"sim", "reds", "endpoints", "comps", "hbtd", "scns"} {
		w.read(ctx, src, &s)
	}
	return s
}

// watcher polls the suite and checks that each node's steps happen in
// order: a step never holds while an earlier one has never held. Polls 50 ms
// apart see effects that close together as simultaneous, which is allowed.
type watcher struct {
	suite *suite
	sim   *sim.Sim
	hsm   *client.Client
	hbtd  *agent.Client
	sub   *subscriber
	nodes []string
	steps []step
	// hooks run once, in the polling goroutine, the first time their step
	// holds for any node (a daemon killed mid-workflow).
	hooks map[string]func()

	seen  map[string][]time.Time // node -> first time each step held
	order []string               // "node step" in the order first seen
}

func newWatcher(s *suite, sm *sim.Sim, sub *subscriber, nodes []string, steps []step) *watcher {
	return &watcher{suite: s, sim: sm, sub: sub, nodes: nodes, steps: steps, hooks: map[string]func(){},
		hsm: client.New(s.url("hsm"), s.client(), "workflow-test"), hbtd: agent.NewClient(s.url("hbtd"), s.client())}
}

// run polls until the first upto steps held for every node, or fails the test at
// the first step seen out of order or at the guard.
func (w *watcher) run(t *testing.T, guard time.Duration, upto int) {
	t.Helper()
	if w.seen == nil {
		w.seen = map[string][]time.Time{}
		for _, n := range w.nodes {
			w.seen[n] = make([]time.Time, len(w.steps))
		}
	}
	err := waitFor(t.Context(), guard, func() (bool, error) {
		snaps := w.take(t.Context())
		done := true
		for _, n := range w.nodes {
			if err := w.check(snaps, n); err != nil {
				return false, err
			}
			done = done && !w.seen[n][upto-1].IsZero()
		}
		return done, nil
	})
	if err != nil {
		t.Fatalf("%v\nsteps seen so far, in order: %s\nnot seen: %s\n%s", err, strings.Join(w.order, ", "), w.missing(), w.diagnose(w.all(t.Context())))
	}
}

// check records the steps that hold for node now and fails if one holds
// while an earlier step has never held and, when known, does not hold now.
func (w *watcher) check(s []snapshot, node string) error {
	seen := w.seen[node]
	now := time.Now()
	for i, st := range w.steps {
		if ok, _ := st.holds(s[i], node); !ok {
			continue
		}
		if seen[i].IsZero() {
			seen[i] = now
			w.order = append(w.order, node+" "+st.name)
			if h := w.hooks[st.name]; h != nil {
				delete(w.hooks, st.name)
				h()
			}
		}
		for j := range i {
			if !seen[j].IsZero() {
				continue
			}
			if ok, known := w.steps[j].holds(s[j], node); ok || !known {
				seen[j] = now // it holds (or cannot be read) at the same moment
				w.order = append(w.order, node+" "+w.steps[j].name)
				continue
			}
			return fmt.Errorf("%s: %q holds before %q ever did", node, st.name, w.steps[j].name)
		}
	}
	return nil
}

// diagnose tells what the daemons last showed of the nodes, and the end of
// the binaries' logs.
func (w *watcher) diagnose(s snapshot) string {
	var b strings.Builder
	for _, n := range w.nodes {
		e := s.endpoints[bmcOf(n)]
		fmt.Fprintf(&b, "%s: sim %+v; reds %q; HSM endpoint %+v; HSM %+v; heartbeating %v; SCNs %v\n",
			n, s.devices[n], s.reds[bmcOf(n)], e.DiscoveryInfo, s.comps[n], s.beating[n], s.scns[n])
	}
	for _, d := range suiteDaemons {
		b.WriteString(w.suite.logTail(d))
	}
	return b.String()
}

func (w *watcher) missing() string {
	var out []string
	for _, n := range w.nodes {
		for i, st := range w.steps {
			if w.seen[n][i].IsZero() {
				out = append(out, n+" "+st.name)
			}
		}
	}
	return strings.Join(out, ", ")
}

// bmcOf is the BMC xname of a node xname (x3000c0s5b0n0 -> x3000c0s5b0).
func bmcOf(node string) string { return strings.TrimSuffix(node, "n0") }

// The steps of the add-node workflow, after the admin's SLS write and the
// hardware going in (powered on).
func addSteps(nid map[string]int) []step {
	return []step{
		{"bmc leased", "sim", func(s snapshot, n string) (bool, bool) { return s.devices[n].BMCAddr != "", true }},
		{"bmc located", "reds", func(s snapshot, n string) (bool, bool) { _, ok := s.reds[bmcOf(n)]; return ok, s.reds != nil }},
		{"bmc registered", "endpoints", func(s snapshot, n string) (bool, bool) {
			_, ok := s.endpoints[bmcOf(n)]
			return ok, s.endpoints != nil
		}},
		{"node walked (NID, role from SLS)", "comps", func(s snapshot, n string) (bool, bool) {
			c, ok := s.comps[n]
			return ok && c.NID != nil && *c.NID == nid[n] && c.Role == "Compute", s.comps != nil
		}},
		{"node booted (script names it)", "sim", func(s snapshot, n string) (bool, bool) { return !s.devices[n].Booted.IsZero(), true }},
		{"node heartbeating", "hbtd", func(s snapshot, n string) (bool, bool) { return s.beating[n], s.beating != nil }},
		{"node Ready", "comps", func(s snapshot, n string) (bool, bool) { return s.comps[n].State == "Ready", s.comps != nil }},
		{"Ready SCN", "scns", func(s snapshot, n string) (bool, bool) { return slices.Contains(s.scns[n], "Ready"), true }},
	}
}

// The steps of the remove-node workflow after the admin's SLS delete: the
// node powered off, silent, then its BMC gone: reds finds it gone and not
// in SLS and has HSM mark it and its node Empty. (reds records it removed
// after HSM's change, so that is checked apart: not before the SCN.)
var removeSteps = []step{
	{"node off", "sim", func(s snapshot, n string) (bool, bool) { d, ok := s.devices[n]; return !ok || d.Power == "Off", true }},
	{"node not heartbeating", "hbtd", func(s snapshot, n string) (bool, bool) { return !s.beating[n], s.beating != nil }},
	{"node Standby", "comps", func(s snapshot, n string) (bool, bool) {
		st := s.comps[n].State
		return st == "Standby" || st == "Empty", s.comps != nil
	}},
	{"Standby SCN", "scns", func(s snapshot, n string) (bool, bool) { return slices.Contains(s.scns[n], "Standby"), true }},
	{"bmc gone", "sim", func(s snapshot, n string) (bool, bool) { _, ok := s.devices[n]; return !ok, true }},
	{"bmc and node Empty", "comps", func(s snapshot, n string) (bool, bool) {
		return s.comps[bmcOf(n)].State == "Empty" && s.comps[n].State == "Empty", s.comps != nil
	}},
	{"Empty SCN", "scns", func(s snapshot, n string) (bool, bool) { return slices.Contains(s.scns[n], "Empty"), true }},
}

// subscriber is an hmnfd subscriber: it records the states of the SCNs it
// receives, per component, in order.
type subscriber struct {
	srv *httptest.Server
	mu  sync.Mutex
	got map[string][]string
}

func newSubscriber(t *testing.T) *subscriber {
	s := &subscriber{got: map[string][]string{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var scn hsm.SCN
		if err := json.NewDecoder(r.Body).Decode(&scn); err != nil {
			t.Errorf("SCN body: %v", err)
		}
		s.mu.Lock()
		for _, c := range scn.Components {
			if scn.State != "" {
				s.got[c] = append(s.got[c], scn.State)
			}
		}
		s.mu.Unlock()
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *subscriber) states() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]string, len(s.got))
	for k, v := range s.got {
		out[k] = slices.Clone(v)
	}
	return out
}

// subscribe registers the subscriber with hmnfd for nodes' state changes,
// with hc.
func (s *subscriber) subscribe(t *testing.T, hc *http.Client, hmnfd string, nodes []string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"Subscriber": "x9000c0s1b0n0", "Components": nodes,
		"States": []string{"Ready", "Standby", "Empty"}, "Url": s.srv.URL + "/scn"})
	resp, err := hc.Post(hmnfd+"/hmi/v1/subscribe", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("hmnfd subscribe: status %d", resp.StatusCode)
	}
}

func getJSON(ctx context.Context, hc *http.Client, url string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d", url, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
