package inventory

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
	"github.com/hmsuite/hms/statemgr/redfish"
)

var rfUpdate = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// rfPassword is the password of every simulated BMC in these tests.
const rfPassword = "sim-Secret-8Qz"

// rfEnv is an API with discovery running over a fresh store. BMCs added
// with rfEnv.bmc are reached in process through rfRouter, by host name.
type rfEnv struct {
	*hsmtest.Server
	t      testing.TB
	store  *Store
	disc   *Discovery
	router *rfRouter
	dbPath string
	// sockets is set when BMCs are reached over real sockets: the test then
	// runs outside a synctest bubble, on the real clock.
	sockets bool
}

func newRFEnv(t testing.TB, cfg DiscoveryConfig) *rfEnv {
	t.Helper()
	return newRFEnvWith(t, cfg, true)
}

// newRFEnvWith is newRFEnv; without viaRouter, BMCs are reached as cfg says
// (real sockets, HTTPS by default).
func newRFEnvWith(t testing.TB, cfg DiscoveryConfig, viaRouter bool) *rfEnv {
	t.Helper()
	return newRFEnvDB(t, testpeer.SQLite, cfg, viaRouter)
}

// newRFEnvOn is newRFEnv on a new database of db. Outside a synctest bubble
// only: PostgreSQL is reached over a socket.
func newRFEnvOn(t testing.TB, db testpeer.DB, cfg DiscoveryConfig) *rfEnv {
	t.Helper()
	return newRFEnvDB(t, db, cfg, true)
}

// newRFEnvDB is newRFEnvWith on a new database of db.
func newRFEnvDB(t testing.TB, db testpeer.DB, cfg DiscoveryConfig, viaRouter bool) *rfEnv {
	t.Helper()
	s, path := newTestStoreOn(t, db)
	creds, err := LoadCredKey(filepath.Join(t.TempDir(), "cred.key"))
	if err != nil {
		t.Fatal(err)
	}
	router := &rfRouter{hosts: map[string]http.Handler{}}
	if viaRouter {
		cfg.PlainHTTP = true
		cfg.HTTPClient = &http.Client{Transport: router}
	}
	e := newRFEnvOver(t, s, NewDiscovery(s, creds, cfg))
	e.router, e.dbPath, e.sockets = router, path, !viaRouter
	return e
}

// newRFEnvOver serves and runs the Discovery d over store s, in process (no
// sockets), so that tests can run it inside a synctest bubble.
func newRFEnvOver(t testing.TB, s *Store, d *Discovery) *rfEnv {
	t.Helper()
	hsm := &rfRouter{hosts: map[string]http.Handler{"hsm": handler(s, d)}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return &rfEnv{Server: hsmtest.InProcess(t, coreOf(s), &http.Client{Transport: hsm}, "http://hsm"), t: t, store: s, disc: d}
}

// newCABundleEnv is an rfEnv whose Discovery (one worker) reaches BMCs over
// real HTTPS and checks their certificates against the DER certificate ca,
// loaded as -bmc-ca-bundle would be.
func newCABundleEnv(t testing.TB, ca []byte) *rfEnv {
	t.Helper()
	dir := t.TempDir()
	bundle := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca}), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := newTestStore(t)
	d, err := LoadDiscovery(s, filepath.Join(dir, "key"), bundle, DiscoveryConfig{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	e := newRFEnvOver(t, s, d)
	e.sockets = true // a real TLS BMC: real clock
	return e
}

// restartDiscovery runs a second Discovery over the same store, as a
// restarted HSM would, until the test ends.
func (e *rfEnv) restartDiscovery() {
	d := NewDiscovery(e.store, e.disc.creds, e.disc.cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = d.Run(ctx) }()
	e.t.Cleanup(func() { cancel(); <-done })
}

// bmc adds an in-process simulated BMC with n systems, reachable as host xname.
func (e *rfEnv) bmc(xname string, n int, f redfishsim.Faults) *redfishsim.BMC {
	e.t.Helper()
	b, err := redfishsim.New(redfishsim.Config{Xname: xname, Tree: redfishsim.Generate(xname, n),
		User: "root", Password: rfPassword, Faults: f})
	if err != nil {
		e.t.Fatal(err)
	}
	e.router.add(xname, b.Handler())
	return b
}

// endpoint GETs one RedfishEndpoint.
func (e *rfEnv) endpoint(id string) hsm.RedfishEndpoint {
	e.t.Helper()
	var ep hsm.RedfishEndpoint
	if err := json.Unmarshal(e.Must(200, "GET", "/Inventory/RedfishEndpoints/"+id, nil), &ep); err != nil {
		e.t.Fatal(err)
	}
	return ep
}

// waitDiscovered waits until the walk of endpoint id has an outcome, and
// returns it. Inside a synctest bubble (every rfEnv without sockets) the
// wait is on the bubble's clock, so a walk that times out does so at once;
// over real sockets it polls the real clock, for a generous bound.
func (e *rfEnv) waitDiscovered(id string) hsm.RedfishEndpoint {
	e.t.Helper()
	deadline := time.Now().Add(time.Hour)
	poll := time.Second
	if e.sockets {
		deadline, poll = time.Now().Add(time.Minute), 5*time.Millisecond
	}
	for {
		if !e.sockets {
			synctest.Wait()
		}
		ep := e.endpoint(id)
		switch ep.DiscoveryInfo.LastDiscoveryStatus {
		case string(redfish.StatusNotYetQueried), string(redfish.StatusDiscoveryStarted):
		default:
			return ep
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("endpoint %s: still %s at %v", id, ep.DiscoveryInfo.LastDiscoveryStatus, deadline)
		}
		time.Sleep(poll)
	}
}

// waitNewWalk is waitDiscovered for an endpoint walked before: it waits for
// the outcome of a walk other than the one before describes.
func (e *rfEnv) waitNewWalk(id string, before hsm.DiscoveryInfo) hsm.RedfishEndpoint {
	e.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ep := e.waitDiscovered(id)
		at := ep.DiscoveryInfo.LastDiscoveryAttempt
		if before.LastDiscoveryAttempt == nil || at != nil && !at.Equal(*before.LastDiscoveryAttempt) {
			return ep
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("endpoint %s: not walked again after 60 s", id)
		}
		<-time.After(5 * time.Millisecond)
	}
}

// rfRouter is an http.RoundTripper serving each host from its own handler,
// in process: no sockets, and a hanging handler only holds its own request.
type rfRouter struct {
	mu    sync.Mutex
	hosts map[string]http.Handler
}

func (r *rfRouter) add(host string, h http.Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hosts[host] = h
}

func (r *rfRouter) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	h := r.hosts[req.URL.Hostname()]
	r.mu.Unlock()
	if h == nil {
		return nil, &net404{host: req.URL.Hostname()}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

type net404 struct{ host string }

func (e *net404) Error() string { return "dial " + e.host + ": no such host" }
