package orchestrator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/ipxe/bss"
	"github.com/hmsuite/hms/power/pcs"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// clock is the tests' clock: it moves only when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// simNode is one node of the simulated cluster.
type simNode struct {
	comp hsm.Component
	on   bool
	// ignoreGraceful: the BMC ignores Soft-Off; ignoreOn: it ignores On;
	// dead: the BMC never answers; noBoot: the node powers on but never
	// fetches its script.
	ignoreGraceful, ignoreOn, dead, noBoot bool
	fetched                                int64 // epoch of the last boot-script fetch
}

// cluster fakes HSM, BSS and PCS on their real wire APIs (the subset bos
// uses), over nodes whose power and boot follow the PCS calls at once, and
// serves image manifests.
type cluster struct {
	t     testing.TB
	clock *clock
	srv   *httptest.Server

	mu     sync.Mutex
	nodes  map[string]*simNode
	groups map[string][]string
	params map[string]bss.BootParams // by host
	calls  []string                  // "PCS On x..", "BSS PUT x.."
	tokens int
	// before runs once, at the start of the next request to a route
	// ("hsm-query", "power-status", "transition"), while bos waits for the
	// answer: a test's way to race a request against an operator pass.
	before map[string]func()
	// hsmDown makes HSM's component query answer 503; queries counts them.
	hsmDown bool
	queries int
	subs    []hsm.Subscription
	// cfs is the CFS's components; cfsSets counts its PATCHes.
	cfs     map[string]*CFSComponent
	cfsSets int
	// lost, when set, is the status PCS answers a transition's read with
	// (404: it forgot it) instead of completed.
	lost int
}

// arm sets the one-shot hook of route.
func (c *cluster) arm(route string, f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.before[route] = f
}

func (c *cluster) fire(route string) {
	c.mu.Lock()
	f := c.before[route]
	delete(c.before, route)
	c.mu.Unlock()
	if f != nil {
		f()
	}
}

func newCluster(t testing.TB, clk *clock, ids ...string) *cluster {
	c := &cluster{t: t, clock: clk, nodes: map[string]*simNode{}, groups: map[string][]string{},
		params: map[string]bss.BootParams{}, before: map[string]func(){}, cfs: map[string]*CFSComponent{}}
	for _, id := range ids {
		c.nodes[id] = &simNode{comp: hsm.Component{ID: id, Type: "Node", State: "Off", Role: "Compute",
			Arch: "X86", Enabled: new(true)}}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hsm/v2/service/ready", func(w http.ResponseWriter, _ *http.Request) {})
	mux.HandleFunc("GET /hsm/v2/State/Components", c.hsmList)
	mux.HandleFunc("GET /hsm/v2/service/values", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, hsm.Values{State: []string{"Unknown", "Empty", "Populated", "Off", "On", "Standby", "Halt", "Ready"}})
	})
	mux.HandleFunc("POST /hsm/v2/Subscriptions/SCN", func(w http.ResponseWriter, r *http.Request) {
		var sub hsm.Subscription
		_ = json.NewDecoder(r.Body).Decode(&sub)
		c.mu.Lock()
		sub.ID = int64(len(c.subs) + 1)
		c.subs = append(c.subs, sub)
		c.mu.Unlock()
		writeJSON(w, sub)
	})
	mux.HandleFunc("GET /hsm/v2/Subscriptions/SCN", func(w http.ResponseWriter, _ *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		writeJSON(w, hsm.SubscriptionList{SubscriptionList: c.subs})
	})
	// The subscriptions' states are all bos sends (client.Hold's replace).
	mux.HandleFunc("PATCH /hsm/v2/Subscriptions/SCN/{id}", func(w http.ResponseWriter, r *http.Request) {
		var p hsm.SubscriptionPatch
		_ = json.NewDecoder(r.Body).Decode(&p)
		c.mu.Lock()
		defer c.mu.Unlock()
		for i := range c.subs {
			if strconv.FormatInt(c.subs[i].ID, 10) == r.PathValue("id") && p.States != nil {
				c.subs[i].States = *p.States
			}
		}
	})
	mux.HandleFunc("POST /hsm/v2/State/Components/Query", c.hsmQuery)
	mux.HandleFunc("PUT /boot/v1/bootparameters", c.bssPut)
	mux.HandleFunc("GET /boot/v1/endpoint-history", c.bssHistory)
	mux.HandleFunc("POST /v1/transitions", c.pcsTransition)
	// The fake carries a transition out before it answers: every one is
	// completed by the time bos asks.
	mux.HandleFunc("GET /v1/transitions", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, pcs.TransitionList{Transitions: []pcs.Transition{}})
	})
	mux.HandleFunc("GET /v1/transitions/{id}", func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		lost := c.lost
		c.mu.Unlock()
		if lost != 0 {
			http.Error(w, "transition not readable", lost)
			return
		}
		writeJSON(w, pcs.Transition{TransitionID: r.PathValue("id"), Status: pcs.TransitionCompleted})
	})
	mux.HandleFunc("POST /v1/power-status", c.pcsStatus)
	mux.HandleFunc("GET /images/{id}/manifest.json", c.manifest)
	mux.HandleFunc("GET /v3/components", c.cfsList)
	mux.HandleFunc("PATCH /v3/components", c.cfsPatch)
	c.srv = httptest.NewServer(mux)
	t.Cleanup(c.srv.Close)
	return c
}

func (c *cluster) node(id string) *simNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[id]
}

func (c *cluster) set(id string, f func(n *simNode)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c.nodes[id])
}

func (c *cluster) manifestURL(image string) string {
	return c.srv.URL + "/images/" + image + "/manifest.json"
}

func (c *cluster) manifest(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if id == "missing" {
		http.NotFound(w, r)
		return
	}
	fmt.Fprintf(w, `{"version":"1.0","artifacts":[
		{"link":{"path":"s3://boot-images/%[1]s/kernel","type":"s3"},"type":"application/vnd.cray.image.kernel"},
		{"link":{"path":"s3://boot-images/%[1]s/initrd","type":"s3"},"type":"application/vnd.cray.image.initrd"},
		{"link":{"path":"s3://boot-images/%[1]s/rootfs","etag":"e1","type":"s3"},"type":"application/vnd.cray.image.rootfs.squashfs"}]}`, id)
}

func (c *cluster) hsmList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	c.mu.Lock()
	defer c.mu.Unlock()
	out := []hsm.Component{}
	for id, n := range c.nodes {
		if g := q.Get("group"); g != "" && !slices.Contains(c.groups[g], id) {
			continue
		}
		if role := q.Get("role"); role != "" && !strings.EqualFold(role, n.comp.Role) {
			continue
		}
		out = append(out, n.comp)
	}
	writeJSON(w, hsm.ComponentList{Components: out})
}

func (c *cluster) hsmQuery(w http.ResponseWriter, r *http.Request) {
	c.fire("hsm-query")
	var req struct{ ComponentIDs []string }
	_ = json.NewDecoder(r.Body).Decode(&req)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queries++
	if c.hsmDown {
		http.Error(w, "HSM is restarting", http.StatusServiceUnavailable)
		return
	}
	out := []hsm.Component{}
	for _, id := range req.ComponentIDs {
		if n, ok := c.nodes[id]; ok {
			out = append(out, n.comp)
		}
	}
	writeJSON(w, hsm.ComponentList{Components: out})
}

func (c *cluster) bssPut(w http.ResponseWriter, r *http.Request) {
	var bp bss.BootParams
	_ = json.NewDecoder(r.Body).Decode(&bp)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tokens++
	for _, h := range bp.Hosts {
		c.params[h] = bp
	}
	c.calls = append(c.calls, "BSS PUT "+strings.Join(bp.Hosts, ","))
	w.Header().Set("BSS-Referral-Token", fmt.Sprintf("token-%d", c.tokens))
}

func (c *cluster) bssHistory(w http.ResponseWriter, _ *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := []bss.EndpointAccess{}
	for id, n := range c.nodes {
		if n.fetched > 0 {
			out = append(out, bss.EndpointAccess{Name: id, Endpoint: bss.EndpointBootscript, LastEpoch: n.fetched})
		}
	}
	writeJSON(w, out)
}

func (c *cluster) pcsTransition(w http.ResponseWriter, r *http.Request) {
	c.fire("transition")
	var req pcs.TransitionRequest
	_ = json.NewDecoder(r.Body).Decode(&req)
	c.mu.Lock()
	defer c.mu.Unlock()
	var ids []string
	for _, l := range req.Location {
		ids = append(ids, l.Xname)
		c.apply(c.nodes[l.Xname], pcs.Operation(req.Operation))
	}
	c.calls = append(c.calls, "PCS "+req.Operation+" "+strings.Join(ids, ","))
	writeJSON(w, pcs.Created{TransitionID: "00000000-0000-0000-0000-000000000001", Operation: pcs.Operation(req.Operation)})
}

// apply carries a power operation out on one node, at once.
func (c *cluster) apply(n *simNode, op pcs.Operation) {
	if n == nil || n.dead {
		return
	}
	switch {
	case op == pcs.OpOn && n.ignoreOn:
	case op == pcs.OpOn:
		n.on = true
		if !n.noBoot {
			n.fetched = c.clock.Now().Unix()
			n.comp.State = "Ready"
		} else {
			n.comp.State = "On"
		}
	case op == pcs.OpSoftOff && n.ignoreGraceful:
	case op == pcs.OpSoftOff || op == pcs.OpForceOff || op == pcs.OpOff:
		n.on, n.comp.State = false, "Off"
	}
}

func (c *cluster) pcsStatus(w http.ResponseWriter, r *http.Request) {
	c.fire("power-status")
	var req pcs.PowerStatusRequest
	_ = json.NewDecoder(r.Body).Decode(&req)
	c.mu.Lock()
	defer c.mu.Unlock()
	out := pcs.PowerStatusList{Status: []pcs.PowerStatus{}}
	for _, id := range req.Xnames {
		n, ok := c.nodes[id]
		if !ok {
			continue
		}
		ps := pcs.PowerStatus{Xname: id, PowerState: pcs.PowerOff, MgmtState: pcs.MgmtAvailable}
		switch {
		case n.dead:
			ps.PowerState, ps.MgmtState, ps.Error = pcs.PowerUndefined, pcs.MgmtUnavailable, "BMC not reachable"
		case n.on:
			ps.PowerState = pcs.PowerOn
		}
		out.Status = append(out.Status, ps)
	}
	writeJSON(w, out)
}

func (c *cluster) cfsList(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := []CFSComponent{}
	for _, id := range strings.Split(r.URL.Query().Get("ids"), ",") {
		if cc, ok := c.cfs[id]; ok {
			out = append(out, *cc)
		}
	}
	writeJSON(w, map[string]any{"components": out, "next": nil})
}

// cfsPatch takes CFS v3's {patch, filters: {ids}}; a new desired
// configuration is pending until the test says how it went.
func (c *cluster) cfsPatch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Patch struct {
			DesiredConfig string `json:"desired_config"`
			Enabled       *bool  `json:"enabled"`
		} `json:"patch"`
		Filters struct {
			IDs string `json:"ids"`
		} `json:"filters"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cfsSets++
	ids := strings.Split(req.Filters.IDs, ",")
	for _, id := range ids {
		c.cfs[id] = &CFSComponent{ID: id, DesiredConfig: req.Patch.DesiredConfig, ConfigurationStatus: CFSPending,
			Enabled: req.Patch.Enabled}
	}
	writeJSON(w, map[string]any{"component_ids": ids})
}

func (c *cluster) takeCalls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = nil
	return out
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// env is the one harness of bos's tests: a bos daemon (its operators not
// running: tests call Reconcile) over a simulated cluster.
type env struct {
	t       testing.TB
	clock   *clock
	cluster *cluster
	dir     string
	daemon  *Daemon
	url     string
	stop    func()
	// tune changes bos's configuration before each start.
	tune func(*DaemonConfig)
}

func newEnv(t testing.TB, nodes ...string) *env {
	t.Helper()
	return newEnvWith(t, nil, nodes...)
}

// newEnvWith is newEnv with bos's configuration changed by tune.
func newEnvWith(t testing.TB, tune func(*DaemonConfig), nodes ...string) *env {
	t.Helper()
	return newEnvIn(t, t.TempDir(), tune, nodes...)
}

// newEnvOn is newEnvWith with bos's database on db.
func newEnvOn(t testing.TB, db testpeer.DB, tune func(*DaemonConfig), nodes ...string) *env {
	t.Helper()
	path := db(t)
	return newEnvWith(t, func(cfg *DaemonConfig) {
		cfg.DB = path
		if tune != nil {
			tune(cfg)
		}
	}, nodes...)
}

// newEnvIn is newEnvWith with bos's database in dir.
func newEnvIn(t testing.TB, dir string, tune func(*DaemonConfig), nodes ...string) *env {
	t.Helper()
	clk := &clock{t: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
	e := &env{t: t, clock: clk, cluster: newCluster(t, clk, nodes...), dir: dir, tune: tune}
	e.start()
	return e
}

// start opens bos (again) on the same database and serves its API.
func (e *env) start() {
	e.t.Helper()
	cfg := DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(e.dir, "bos.db"),
		HSMURL: e.cluster.srv.URL, BSSURL: e.cluster.srv.URL, PCSURL: e.cluster.srv.URL, Now: e.clock.Now,
		CFSURL: e.cluster.srv.URL, FallbackPoll: 10 * time.Minute}
	if e.tune != nil {
		e.tune(&cfg)
	}
	d, err := StartDaemon(e.t.Context(), cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.t.Context())
	done := make(chan error, 1)
	go func() { done <- d.srv.Run(ctx) }()
	e.daemon, e.url = d, d.URL()
	var once sync.Once
	e.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				e.t.Error(err)
			}
			if err := d.store.Close(); err != nil {
				e.t.Error(err)
			}
		})
	}
	e.t.Cleanup(e.stop)
}

// restart stops bos and starts it again on the same database.
func (e *env) restart() {
	e.stop()
	e.start()
}

// reconcile runs one operator pass.
func (e *env) reconcile() {
	e.t.Helper()
	if err := e.daemon.svc.Reconcile(e.t.Context()); err != nil {
		e.t.Fatalf("reconcile: %v", err)
	}
}

// call sends a request (body JSON-encoded unless []byte or string) and
// decodes the answer into out when given.
func (e *env) call(method, path string, body any, out any) int {
	e.t.Helper()
	return e.callAs("", method, path, body, out)
}

// callAs is call for a tenant (its Cray-Tenant-Name; "" sends none).
func (e *env) callAs(tenant, method, path string, body any, out any) int {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if tenant != "" {
		req.Header.Set(TenantHeader, tenant)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			e.t.Fatalf("%s %s: decode %q: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode
}

// template is a one-boot-set template over nodes booting image.
func (e *env) template(name, image string, nodes ...string) {
	e.t.Helper()
	body := map[string]any{"boot_sets": map[string]any{"compute": map[string]any{
		"path": e.cluster.manifestURL(image), "type": "s3", "node_list": nodes,
		"kernel_parameters": "console=ttyS0", "rootfs_provider": "sbps", "rootfs_provider_passthrough": "sbps:v1:x"}}}
	if code := e.call("PUT", "/v2/sessiontemplates/"+name, body, nil); code != 200 {
		e.t.Fatalf("PUT template %s: %d", name, code)
	}
}

func (e *env) component(id string) Component {
	e.t.Helper()
	var c Component
	if code := e.call("GET", "/v2/components/"+id, nil, &c); code != 200 {
		e.t.Fatalf("GET component %s: %d", id, code)
	}
	return c
}
