package power

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/authtest"
	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/power/pcs"
	"github.com/hmsuite/hms/statemgr"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/inventory"
)

// env is the one harness of pcs's tests: a fleet of simulated BMCs, a real
// HSM that has discovered them, and a pcs, all on loopback.
type env struct {
	t      *testing.T
	fleet  *redfishsim.Fleet
	fleets []*redfishsim.Fleet // fleet first
	hsm    *client.Client
	hsmURL string
	dir    string
	db     string // pcs's database: a SQLite file in dir or a PostgreSQL URL
	// log, if set, is pcs's logger (from the next startPCS on).
	log    *slog.Logger
	daemon *Daemon
	stop   context.CancelFunc
	done   chan error
	events *events
	// issuer, if set, signs the tokens HSM checks (see buildEnv).
	issuer *authtest.Issuer
	walked *walkLog
	// clock, if set, is the engine's clock (from the next startPCS on).
	clock *skipClock
	// bmcClock, if set, times BMC requests (from the next startPCS on).
	bmcClock *timerClock
}

// timerClock is a clock whose timers fire only when the test says so.
type timerClock struct {
	mu      sync.Mutex
	pending []chan time.Time
	kick    chan struct{} // closed and replaced when a timer is set
}

func newTimerClock() *timerClock { return &timerClock{kick: make(chan struct{})} }

func (c *timerClock) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.mu.Lock()
	c.pending = append(c.pending, ch)
	close(c.kick)
	c.kick = make(chan struct{})
	c.mu.Unlock()
	return ch
}

// fire fires every timer set so far and returns a channel closed when the
// next one is set.
func (c *timerClock) fire() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range c.pending {
		ch <- time.Time{}
	}
	c.pending = nil
	return c.kick
}

// skipClock is a clock on which every wait ends at once, moving the time
// on by what was waited: a deadline passes after as many read-backs as
// fit in it, without waiting for it on the real clock.
type skipClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *skipClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *skipClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// events records what pcs reports through Config.OnEvent, for tests to
// wait on rather than poll the API.
type events struct {
	mu   sync.Mutex
	all  []Event
	kick chan struct{} // closed and replaced on every event
}

func newEvents() *events { return &events{kick: make(chan struct{})} }

func (r *events) record(ev Event) {
	r.mu.Lock()
	r.all = append(r.all, ev)
	close(r.kick)
	r.kick = make(chan struct{})
	r.mu.Unlock()
}

// wait returns the first event recorded that matches ok, waiting for it
// (go test's -timeout bounds a wait that never ends).
func (r *events) wait(t *testing.T, ok func(Event) bool) Event {
	t.Helper()
	for i := 0; ; {
		r.mu.Lock()
		for ; i < len(r.all); i++ {
			if ok(r.all[i]) {
				ev := r.all[i]
				r.mu.Unlock()
				return ev
			}
		}
		kick := r.kick
		r.mu.Unlock()
		select {
		case <-kick:
		case <-t.Context().Done():
			t.Fatal("test ended waiting for a pcs event")
		}
	}
}

const simPassword = "pw"

// newEnv starts n BMCs (one node each), HSM and pcs; faults apply to BMC
// i from the start (before HSM walks it).
func newEnv(t *testing.T, n int, faults map[int]redfishsim.Faults) *env {
	t.Helper()
	return newEnvTree(t, n, redfishsim.TemplatePower(1), faults)
}

// newEnvTree is newEnv with BMCs serving tree (a template or a DMTF mockup).
func newEnvTree(t *testing.T, n int, tree *redfishsim.Tree, faults map[int]redfishsim.Faults) *env {
	t.Helper()
	return newEnvFleets(t, faults, redfishsim.FleetConfig{Count: n, Tree: tree})
}

// newEnvFleets starts the fleets (on loopback, with the test login), HSM
// walking all their BMCs, and pcs. The first fleet is e.fleet; faults
// apply to its BMCs from the start.
func newEnvFleets(t *testing.T, faults map[int]redfishsim.Faults, cfgs ...redfishsim.FleetConfig) *env {
	t.Helper()
	return buildEnv(t, nil, nil, faults, cfgs...)
}

// newEnvOn is newEnv with pcs's database on db.
func newEnvOn(t *testing.T, db testpeer.DB, n int, faults map[int]redfishsim.Faults) *env {
	t.Helper()
	return buildEnv(t, nil, db, faults, redfishsim.FleetConfig{Count: n, Tree: redfishsim.TemplatePower(1)})
}

// buildEnv is newEnvFleets; with an issuer, HSM checks tokens and pcs,
// holding an admin token and no credentials of its own, reads the BMC
// logins from HSM. pcs's database is on db (nil: a SQLite file).
func buildEnv(t *testing.T, issuer *authtest.Issuer, db testpeer.DB, faults map[int]redfishsim.Faults, cfgs ...redfishsim.FleetConfig) *env {
	t.Helper()
	ctx := t.Context()
	var fleets []*redfishsim.Fleet
	for _, cfg := range cfgs {
		cfg.Listen, cfg.User, cfg.Password = "127.0.0.1:0", "root", simPassword
		fleet, err := redfishsim.NewFleet(cfg)
		if err != nil {
			t.Fatal(err)
		}
		fctx, fcancel := context.WithCancel(ctx)
		fdone := make(chan error, 1)
		go func() { fdone <- fleet.Run(fctx) }()
		t.Cleanup(func() { fcancel(); <-fdone })
		fleets = append(fleets, fleet)
	}
	fleet := fleets[0]
	for i, f := range faults {
		if err := fleet.Members()[i].BMC.SetFaults(f); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	walked := &walkLog{done: map[string]bool{}, kick: make(chan struct{})}
	hd, err := statemgr.StartDaemon(ctx, statemgr.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "hsm.db"),
		CredKeyFile: filepath.Join(dir, "cred.key"), Auth: issuerConfig(issuer),
		Discovery: inventory.DiscoveryConfig{PlainHTTP: true, Timeout: 10 * time.Second, OnWalked: walked.record}})
	if err != nil {
		t.Fatal(err)
	}
	hctx, hcancel := context.WithCancel(ctx)
	hdone := make(chan error, 1)
	go func() { hdone <- hd.Run(hctx) }()
	t.Cleanup(func() { hcancel(); <-hdone })
	e := &env{t: t, fleet: fleet, fleets: fleets, hsm: client.New(hd.URL(), adminToken(issuer).Client(nil), "test"), hsmURL: hd.URL(),
		dir: dir, db: filepath.Join(dir, "pcs.db"), events: newEvents(), issuer: issuer, walked: walked}
	if db != nil {
		e.db = db(t)
	}
	var eps []hsm.RedfishEndpoint
	for _, f := range fleets {
		for _, m := range f.Members() {
			eps = append(eps, hsm.RedfishEndpoint{ID: m.BMC.Xname(), FQDN: m.Addr, User: "root", Password: simPassword,
				RediscoverOnUpdate: true})
		}
	}
	if err := e.hsm.CreateRedfishEndpoints(ctx, eps...); err != nil {
		t.Fatal(err)
	}
	e.waitWalked()
	e.startPCS()
	return e
}

// issuerConfig is HSM's auth configuration: enforce with issuer, else off.
func issuerConfig(issuer *authtest.Issuer) auth.Config {
	if issuer == nil {
		return auth.Config{}
	}
	return issuer.Config()
}

// adminToken is the admin token the tests and pcs send (none without issuer).
func adminToken(issuer *authtest.Issuer) token.Config {
	if issuer == nil {
		return token.Config{}
	}
	return token.Config{Token: issuer.Token("pcs", auth.Admin)}
}

// walkLog records the BMCs HSM has walked (DiscoveryConfig.OnWalked).
type walkLog struct {
	mu   sync.Mutex
	done map[string]bool
	kick chan struct{} // closed and replaced on every walk
}

func (w *walkLog) record(x string) {
	w.mu.Lock()
	w.done[x] = true
	close(w.kick)
	w.kick = make(chan struct{})
	w.mu.Unlock()
}

// waitWalked waits until HSM has walked every BMC of the env's fleets.
func (e *env) waitWalked() {
	e.t.Helper()
	for {
		w := e.walked
		w.mu.Lock()
		left := 0
		for _, f := range e.fleets {
			for _, m := range f.Members() {
				if !w.done[m.BMC.Xname()] {
					left++
				}
			}
		}
		kick := w.kick
		w.mu.Unlock()
		if left == 0 {
			return
		}
		select {
		case <-kick:
		case <-e.t.Context().Done():
			e.t.Fatalf("test ended with %d BMCs not walked by HSM", left)
		}
	}
}

// startPCS starts (or restarts) pcs on the env's database.
func (e *env) startPCS() {
	e.t.Helper()
	cfg := DaemonConfig{Listen: "127.0.0.1:0", DB: e.db, Log: e.log,
		HSMURL: e.hsmURL, Credentials: StaticCredentials{"default": {Username: "root", Password: simPassword}},
		BMCTimeout: 2 * time.Second,
		Service: Config{Scheme: "http", Poll: 10 * time.Millisecond, Minute: time.Second, SampleInterval: time.Hour,
			OnEvent: e.events.record}}
	if e.issuer != nil {
		cfg.Credentials, cfg.Auth = nil, auth.Config{Token: adminToken(e.issuer)}
	}
	if e.bmcClock != nil {
		cfg.BMCAfter = e.bmcClock.After
	}
	if e.clock != nil {
		cfg.Service.Now, cfg.Service.After = e.clock.Now, e.clock.After
	}
	d, err := StartDaemon(e.t.Context(), cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(e.t.Context()))
	e.daemon, e.stop, e.done = d, cancel, make(chan error, 1)
	go func() { e.done <- d.Run(ctx) }()
	e.t.Cleanup(e.stopPCS)
}

// stopPCS stops pcs (idempotent).
func (e *env) stopPCS() {
	if e.stop == nil {
		return
	}
	e.stop()
	if err := <-e.done; err != nil {
		e.t.Errorf("pcs Run: %v", err)
	}
	e.stop = nil
}

// node is the xname of the node behind BMC i.
func (e *env) node(i int) string { return e.fleet.Members()[i].BMC.Xname() + "n0" }

// call sends a request to pcs and returns the status and body.
func (e *env) call(method, path string, body any) (int, []byte) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.daemon.URL()+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// transition posts a transition, waits for it to end and returns it.
func (e *env) transition(op string, deadline int, locs ...pcs.Location) pcs.Transition {
	e.t.Helper()
	id := e.start(op, deadline, locs...)
	if err := e.daemon.Service().Wait(e.t.Context(), id); err != nil {
		e.t.Fatal(err)
	}
	return e.get(id)
}

// start posts a transition and returns its ID.
func (e *env) start(op string, deadline int, locs ...pcs.Location) string {
	e.t.Helper()
	code, b := e.call("POST", "/transitions", map[string]any{"operation": op, "taskDeadlineMinutes": deadline, "location": locs})
	if code != 200 {
		e.t.Fatalf("POST /transitions: %d %s", code, b)
	}
	var created struct{ TransitionID string }
	_ = json.Unmarshal(b, &created)
	return created.TransitionID
}

func (e *env) get(id string) pcs.Transition {
	e.t.Helper()
	code, b := e.call("GET", "/v1/transitions/"+id, nil)
	if code != 200 {
		e.t.Fatalf("GET transition: %d %s", code, b)
	}
	var tr pcs.Transition
	if err := json.Unmarshal(b, &tr); err != nil {
		e.t.Fatal(err)
	}
	return tr
}

func locs(xs ...string) []pcs.Location {
	out := make([]pcs.Location, len(xs))
	for i, x := range xs {
		out[i] = pcs.Location{Xname: x}
	}
	return out
}

// tasks maps xname -> task of a transition.
func tasks(tr pcs.Transition) map[string]pcs.Task {
	out := map[string]pcs.Task{}
	for _, t := range tr.Tasks {
		out[t.Xname] = t
	}
	return out
}

// wantMetrics checks that pcs's /metrics has each of the lines; a line
// ending in a space stands for that metric with any value.
func (e *env) wantMetrics(lines ...string) {
	e.t.Helper()
	code, b := e.call("GET", "/metrics", nil)
	if code != 200 {
		e.t.Fatalf("GET /metrics: %d", code)
	}
	for _, l := range lines {
		end := "\n"
		if strings.HasSuffix(l, " ") {
			end = ""
		}
		if !strings.Contains("\n"+string(b), "\n"+l+end) {
			e.t.Errorf("/metrics lacks %q in:\n%s", l, grepLines(string(b), "pcs_"))
		}
	}
}

func grepLines(s, prefix string) string {
	var out []string
	for l := range strings.Lines(s) {
		if strings.HasPrefix(l, prefix) && !strings.Contains(l, "_bucket") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}
