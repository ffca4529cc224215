package discovery

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/internal/sealed"
	"github.com/hmsuite/hms/internal/snmpsim"
	"github.com/hmsuite/hms/ipxe/lease"
	"github.com/hmsuite/hms/layout"
	slsclient "github.com/hmsuite/hms/layout/client"
	"github.com/hmsuite/hms/statemgr"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/inventory"
)

// suite is one test's world: a real SLS and HSM on loopback, simulated
// BMCs, an in-process bus, and the discovery Service under test.
type suite struct {
	t     testing.TB
	dir   string
	db    string // reds's database: a SQLite file in dir unless a test sets a PostgreSQL URL
	sls   *slsclient.Client
	hsm   *client.Client
	bus   *bus.Memory
	store *Store
	svc   *Service
	bmcs  []redfishsim.Member
	port  int // every simulated BMC's HTTPS port
	done  chan outcome
	stop  context.CancelFunc
	wg    sync.WaitGroup
	// agent is the simulated switch of newRiver's suites.
	agent *snmpsim.Agent
	// ctx lives as long as the suite; hsmCfg is how HSM is (re)started,
	// stopHSM stops it.
	ctx     context.Context
	hsmCfg  statemgr.DaemonConfig
	stopHSM func()
	// svcCfg and walker are what startService was given (restartService
	// starts the same again); stopService stops the Service.
	svcCfg      Config
	walker      Walker
	stopService func()
}

// outcome is what Config.Done reported for one MAC.
type outcome struct {
	mac, xname string
	err        error
	timing     Timing
}

// newSuite starts SLS (loaded with hw) and HSM, and n simulated BMCs named
// by xnames, on 127.77.<k>.x addresses sharing one port.
func newSuite(t testing.TB, hw map[string]any, xnames []string) *suite {
	t.Helper()
	return newSuiteOpts(t, hw, xnames, suiteOpts{})
}

// suiteOpts are the rarer knobs of a suite.
type suiteOpts struct {
	// walkGate, if set, holds every request of HSM's Redfish walks until it
	// is closed (a benchmark measuring registration without the walks).
	walkGate <-chan struct{}
}

// gated holds requests until gate is closed.
type gated struct {
	gate <-chan struct{}
	rt   http.RoundTripper
}

func (g gated) RoundTrip(r *http.Request) (*http.Response, error) {
	select {
	case <-g.gate:
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	return g.rt.RoundTrip(r)
}

func newSuiteOpts(t testing.TB, hw map[string]any, xnames []string, opts suiteOpts) *suite {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &suite{t: t, dir: t.TempDir(), bus: bus.NewMemory(), done: make(chan outcome, 1024), stop: cancel, ctx: ctx}
	s.db = filepath.Join(s.dir, "reds.db")
	t.Cleanup(s.close)
	sd, err := layout.StartDaemon(ctx, layout.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(s.dir, "sls.db")})
	if err != nil {
		t.Fatal(err)
	}
	s.run(func() error { return sd.Run(ctx) })
	s.sls = slsclient.New(sd.URL(), nil)
	dump, _ := json.Marshal(map[string]any{"Hardware": hw, "Networks": map[string]any{}})
	if err := s.sls.Load(ctx, bytes.NewReader(dump)); err != nil {
		t.Fatal(err)
	}
	var disc inventory.DiscoveryConfig
	if opts.walkGate != nil {
		tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, MaxIdleConnsPerHost: 4} //nolint:gosec // simulated BMCs
		disc.HTTPClient = &http.Client{Transport: gated{gate: opts.walkGate, rt: tr}}
		// HSM's own transport drops its connections after each walk; this
		// shared one must before the BMCs stop (else they wait for them).
		stop := s.stop
		s.stop = func() { tr.CloseIdleConnections(); stop() }
	}
	s.hsmCfg = statemgr.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(s.dir, "hsm.db"),
		SLSURL: sd.URL(), CredKeyFile: filepath.Join(s.dir, "hsm.key"), Publisher: s.bus, Discovery: disc}
	s.startHSM()
	if len(xnames) > 0 {
		s.startBMCs(ctx, xnames)
	}
	return s
}

// startHSM runs HSM on s.hsmCfg until stopHSM or the end of the test; the
// first start picks a free port, which later starts bind again.
func (s *suite) startHSM() {
	t := s.t
	hd, err := statemgr.StartDaemon(s.ctx, s.hsmCfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.hsm == nil {
		s.hsm = client.New(hd.URL(), nil, "reds-test")
		u, _ := url.Parse(hd.URL())
		s.hsmCfg.Listen = u.Host
	}
	ctx, cancel := context.WithCancel(s.ctx)
	done := make(chan struct{})
	s.run(func() error { defer close(done); return hd.Run(ctx) })
	s.stopHSM = func() { cancel(); <-done }
}

func (s *suite) run(fn func() error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := fn(); err != nil {
			s.t.Errorf("daemon: %v", err)
		}
	}()
}

func (s *suite) close() {
	s.stop()
	s.wg.Wait()
}

// startBMCs serves simulated BMCs with TLS, each on its own loopback address.
func (s *suite) startBMCs(ctx context.Context, xnames []string) {
	t := s.t
	s.port = freePort(t)
	tlsConf, err := redfishsim.NewTLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	f, err := redfishsim.NewFleet(redfishsim.FleetConfig{Count: len(xnames), ByAddress: true,
		Listen: fmt.Sprintf("127.77.%d.1:%d", s.port%200+1, s.port), Xname: func(i int) string { return xnames[i] },
		Tree: redfishsim.Template(1), TLS: tlsConf, Log: slog.New(slog.DiscardHandler),
		PasswordChangeRequired: true}) // as factory BMCs are
	if err != nil {
		t.Fatal(err)
	}
	s.bmcs = f.Members()
	s.run(func() error { return f.Run(ctx) })
}

// startService runs the Service against the suite, walking switches with w.
func (s *suite) startService(w Walker, cfg Config) {
	t := s.t
	s.svcCfg, s.walker = cfg, w
	box, err := sealed.LoadKey(filepath.Join(s.dir, "reds.key"))
	if err != nil {
		t.Fatal(err)
	}
	if s.store, err = OpenStore(context.Background(), s.db, box, nil); err != nil {
		t.Fatal(err)
	}
	if cfg.HSM == nil {
		cfg.HSM = s.hsm
	}
	if cfg.SLS == nil {
		cfg.SLS = s.sls
	}
	cfg.Store, cfg.Walker, cfg.Bus = s.store, w, s.bus
	if cfg.BMCs == nil {
		cfg.BMCs = s.bmcClient(redfishsim.DefaultPassword)
	}
	cfg.Done = func(o Outcome) { s.done <- outcome{o.MAC, o.Xname, o.Err, o.Timing} }
	if cfg.PresenceInterval == 0 {
		cfg.PresenceInterval = time.Hour // the tests call CheckPresence
	}
	if cfg.HSMPoll == 0 {
		cfg.HSMPoll = time.Hour
	}
	s.svc = New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	stop := s.stop
	s.stop = func() { cancel(); stop() }
	done, store, svc := make(chan struct{}), s.store, s.svc
	s.run(func() error { defer close(done); defer store.Close(); return svc.Run(ctx) })
	s.stopService = func() { cancel(); <-done }
}

// restartService stops the Service and starts a new one, as a restart of
// reds does: same database, same configuration, nothing kept in memory.
func (s *suite) restartService() {
	s.stopService()
	s.startService(s.walker, s.svcCfg)
}

// bmcClient reaches the suite's BMCs with factory password pw.
func (s *suite) bmcClient(pw string) *BMCs {
	return NewBMCs(BMCConfig{DefaultUser: redfishsim.DefaultUser, DefaultPassword: pw, Port: s.port, Insecure: true, Timeout: 5 * time.Second})
}

// lease publishes a commit lease event for mac at ip, as the DHCP server
// does for a MAC it does not know.
func (s *suite) lease(mac, ip string) {
	s.t.Helper()
	s.leaseEvent(lease.Event{Kind: lease.Commit, MACAddress: mac, IPAddress: ip})
}

// leaseEvent publishes ev (its Time set to now).
func (s *suite) leaseEvent(ev lease.Event) {
	s.t.Helper()
	ev.Time = time.Now()
	b, _ := lease.Encode(ev)
	if err := s.bus.Publish(context.Background(), lease.Topic, bus.Message{Key: []byte(lease.Key(ev.MACAddress)), Value: b}); err != nil {
		s.t.Fatal(err)
	}
}

// next waits for the Service's next outcome.
func (s *suite) next() outcome {
	s.t.Helper()
	select {
	case o := <-s.done:
		return o
	case <-time.After(time.Minute):
		s.t.Fatal("no outcome from the discovery service within a minute")
	}
	return outcome{}
}

// bmcIP is the address of simulated BMC i (without the port).
func (s *suite) bmcIP(i int) string {
	host, _, _ := net.SplitHostPort(s.bmcs[i].Addr)
	return host
}

// bmcMAC is the MAC simulated BMC i's manager reports (and DHCP leases to).
func (s *suite) bmcMAC(i int) string { return redfishsim.MAC(s.bmcs[i].BMC.Xname(), "bmc:eth0") }

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	n, _ := strconv.Atoi(p)
	return n
}

// simSwitch serves, from an in-process agent (v2c "public"), a switch
// whose port ethernet1/1/<i+1> (bridge port i+1) carries macs[i].
func simSwitch(t testing.TB, macs ...string) (*snmpsim.Agent, string) {
	t.Helper()
	var sw snmpsim.Switch
	for i, m := range macs {
		sw.Ports = append(sw.Ports, snmpsim.Port{Bridge: i + 1, IfIndex: 1000 + i + 1, Name: fmt.Sprintf("ethernet1/1/%d", i+1)})
		sw.FDB = append(sw.FDB, snmpsim.Entry{MAC: m, Bridge: i + 1, VLAN: 1})
	}
	return startSim(t, sw)
}

// riverLayout is an SLS layout: cabinet x3000 with switch x3000c0w14 at
// switchAddr (v3 user testV3, or v2c when v3 is false), and for each port
// ethernet1/1/<i+1> a connector cabling BMC x3000c0s<i+1>b0, whose node
// x3000c0s<i+1>b0n0 has NID i+1 and Role Compute.
func riverLayout(switchAddr string, v3 bool, bmcs int) map[string]any {
	sw := map[string]any{"IP4addr": switchAddr, "Brand": "Dell", "Model": "S3048-ON"}
	if v3 {
		sw["SNMPUsername"], sw["SNMPAuthProtocol"], sw["SNMPAuthPassword"] = testV3.User, testV3.AuthProtocol, testV3.AuthPasswd
		sw["SNMPPrivProtocol"], sw["SNMPPrivPassword"] = testV3.PrivProtocol, testV3.PrivPasswd
	}
	hw := map[string]any{
		"x3000":      map[string]any{"Xname": "x3000", "Class": "River"},
		"x3000c0w14": map[string]any{"Xname": "x3000c0w14", "Class": "River", "ExtraProperties": sw},
	}
	for i := range bmcs {
		j := fmt.Sprintf("x3000c0w14j%d", i+1)
		bmc := fmt.Sprintf("x3000c0s%db0", i+1)
		hw[j] = map[string]any{"Xname": j, "Class": "River", "ExtraProperties": map[string]any{
			"VendorName": fmt.Sprintf("ethernet1/1/%d", i+1), "NodeNics": []string{bmc}}}
		hw[bmc] = map[string]any{"Xname": bmc, "Class": "River"}
		hw[bmc+"n0"] = map[string]any{"Xname": bmc + "n0", "Class": "River", "ExtraProperties": map[string]any{
			"NID": i + 1, "Role": "Compute"}}
	}
	return hw
}

// fakeClock is a settable clock for Config.Now: the tests move it instead
// of waiting.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
