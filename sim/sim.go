// Package sim simulates the hardware of an HMS machine against a running
// suite (hms up): an SLS layout for it, River cabinets of node BMCs
// (internal/redfishsim, factory credentials) cabled to one simulated
// management switch per chassis (internal/snmpsim, v2c or v3), and a node behind
// each BMC that boots when the BMC powers it on: a relayed DHCP exchange
// with the suite's DHCP server, its boot script from bss, then heartbeats to
// hbtd with the heartbeat agent. Every address is on 127.0.0.0/8 (Linux
// routes all of it to lo), so it runs without root or namespaces.
//
// A running Sim is driven through its control API (api.go): add, remove,
// power on|off and kill-bmc, as `hms sim` does.
package sim

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/internal/snmpsim"
	slsclient "github.com/hmsuite/hms/layout/client"
	"github.com/hmsuite/hms/layout/sls"
)

// Config is what a Sim simulates and where the suite is.
type Config struct {
	// Nodes is how many River node BMCs (one node each) there are at start.
	Nodes int
	// Mountain is the Mountain hardware there is at start.
	Mountain Mountain
	// SLSURL, BSSURL and HBTDURL are the suite's daemons.
	SLSURL, BSSURL, HBTDURL string
	// DHCPServer is the suite's DHCP server (hms up -bss-dhcp-listen).
	DHCPServer string
	// Relay is the relay's giaddr:port; the DHCP server must serve a
	// relayed subnet holding giaddr and reply to the port
	// (-bss-dhcp-relay-port).
	Relay string
	// BMCPort is the HTTPS port every BMC listens on at its lease address
	// (hms up -reds-bmc-port).
	BMCPort int
	// SNMPPort is the UDP port of the switches (127.21.<cab>.<chassis+1>).
	SNMPPort int
	// SNMPUser, when it has a Name, is the SNMPv3 user the switches answer
	// (and nothing else), which SLS gives reds; else they answer v2c
	// community public (reds' -snmp-community).
	SNMPUser snmpsim.User
	// Control is the control API's HOST:PORT.
	Control string
	// PoweredOff starts the nodes powered off (they boot on a Redfish
	// reset On, from pcs or `hms sim power on`).
	PoweredOff bool
	// Kernel is the kernel URL of the Default boot entry the sim creates
	// in bss when there is none (the nodes never fetch it).
	Kernel string
	// BootRetry is the first wait before a node asks bss again for a
	// script that does not name it yet; the wait doubles after each such
	// script, up to four times BootRetry.
	BootRetry time.Duration
	// HeartbeatInterval is the nodes' heartbeat interval.
	HeartbeatInterval time.Duration
	// Token is what the sim's own calls (SLS layout, bss boot entry) send
	// when the suite checks tokens; its nodes send the node tokens bss
	// gives them, as real nodes do.
	Token token.Config
	Log   *slog.Logger
}

// Sim is the simulated machine with its sockets bound. Run it, or Close it.
type Sim struct {
	cfg   Config
	relay *relay
	tls   *tls.Config
	sls   *slsclient.Client
	hbtd  *agent.Client
	hc    *http.Client // the sim's own calls, with Config.Token
	// nodeHC is the nodes' client: no token, each connection from the
	// address withSource puts in the request's context.
	nodeHC *http.Client
	// base is the transport of the nodes' heartbeats.
	base *http.Client
	ctl  net.Listener

	mu       sync.Mutex
	devices  map[string]*device // by BMC xname
	switches map[string]*mgmtSwitch
	pending  []func(context.Context) error // goroutines Run starts
	wake     chan struct{}
	nextNID  int
}

// New binds the relay and the control API and creates the starting
// devices (their layout is written by Run).
func New(cfg Config) (*Sim, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	tc, err := redfishsim.NewTLSConfig()
	if err != nil {
		return nil, err
	}
	r, err := listenRelay(cfg.Relay, cfg.DHCPServer)
	if err != nil {
		return nil, err
	}
	ctl, err := net.Listen("tcp", cfg.Control)
	if err != nil {
		r.conn.Close()
		return nil, fmt.Errorf("control listen on %s: %w", cfg.Control, err)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}
	base := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	hc := cfg.Token.Client(base)
	if hc == nil {
		hc = base
	}
	s := &Sim{cfg: cfg, relay: r, tls: tc, sls: slsclient.New(cfg.SLSURL, hc), hbtd: agent.NewClient(cfg.HBTDURL, base),
		hc: hc, nodeHC: newNodeClient(), base: base, ctl: ctl, devices: map[string]*device{}, switches: map[string]*mgmtSwitch{},
		wake: make(chan struct{}, 1)}
	if err := cfg.Mountain.Validate(); err != nil {
		s.Close()
		return nil, err
	}
	places := make([]place, 0, cfg.Nodes)
	for i := range cfg.Nodes {
		places = append(places, placeOf(i))
	}
	for _, p := range append(places, cfg.Mountain.places()...) {
		if _, err := s.add(p, !cfg.PoweredOff); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// ControlURL is the control API's base URL.
func (s *Sim) ControlURL() string { return "http://" + s.ctl.Addr().String() }

// Close releases the sockets of a Sim that will not be Run.
func (s *Sim) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	errs := []error{s.relay.conn.Close(), s.ctl.Close()}
	for _, w := range s.switches {
		errs = append(errs, w.conn.Close())
	}
	return errors.Join(errs...)
}

// Run writes the layout to SLS and a Default boot entry to bss, then runs
// the devices until ctx ends.
func (s *Sim) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.relay.run(ctx) })
	g.Go(func() error { return s.serveControl(ctx) })
	if err := s.writeLayout(ctx, s.Devices()); err != nil {
		s.Close()
		return err
	}
	if err := s.bootEntry(ctx); err != nil {
		s.Close()
		return err
	}
	for {
		s.mu.Lock()
		fns := s.pending
		s.pending = nil
		s.mu.Unlock()
		for _, fn := range fns {
			g.Go(func() error { return fn(ctx) })
		}
		select {
		case <-ctx.Done():
			return g.Wait()
		case <-s.wake:
		}
	}
}

// spawn has Run start fn; s.mu is held.
func (s *Sim) spawnLocked(fn func(context.Context) error) {
	s.pending = append(s.pending, fn)
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// add creates the device at p (and, River, its chassis's switch if new);
// on powers its node on at once.
func (s *Sim) add(p place, on bool) (*device, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.devices[p.bmcX()]; ok {
		return d, fmt.Errorf("%s: %w", p.bmcX(), errExists)
	}
	sw, err := s.switchLocked(p)
	if err != nil {
		return nil, err
	}
	nid := 0
	if p.kind != chassisBMC {
		s.nextNID++
		nid = s.nextNID
	}
	d, err := newDevice(p, nid)
	if err != nil {
		return nil, err
	}
	if p.kind == chassisBMC {
		s.devices[p.bmcX()] = d
		s.spawnLocked(func(ctx context.Context) error { return d.runBMC(ctx, s, nil) })
		return d, nil
	}
	if !on {
		if err := d.bmc.Reset(systemPath, "ForceOff"); err != nil {
			return nil, err
		}
		<-d.power // the sim's own power-off is not a change to act on
	}
	s.devices[p.bmcX()] = d
	s.spawnLocked(func(ctx context.Context) error { return d.runBMC(ctx, s, sw) })
	s.spawnLocked(func(ctx context.Context) error { d.runNode(ctx, s, on); return nil })
	return d, nil
}

// switchLocked returns the switch of River place p's chassis, listening
// on it first if it is new (nil for Mountain: nothing is cabled there).
func (s *Sim) switchLocked(p place) (*mgmtSwitch, error) {
	if p.kind != riverNode {
		return nil, nil
	}
	if sw, ok := s.switches[p.chassisX()]; ok {
		return sw, nil
	}
	sw, err := listenSwitch(fmt.Sprintf("%s:%d", p.switchAddr(), s.cfg.SNMPPort), s.cfg.SNMPUser)
	if err != nil {
		return nil, err
	}
	s.switches[p.chassisX()] = sw
	s.spawnLocked(sw.run)
	return sw, nil
}

// Devices returns the status of every device: chassis controllers (no
// NID) first, by xname, then the node BMCs by NID.
func (s *Sim) Devices() []Status {
	s.mu.Lock()
	out := make([]Status, 0, len(s.devices))
	for _, d := range s.devices {
		out = append(out, d.status())
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b Status) int { return cmp.Or(a.NID-b.NID, strings.Compare(a.BMC, b.BMC)) })
	return out
}

// writeLayout puts the SLS objects of the devices (and their chassis) into
// SLS, layoutWriters at a time; existing objects are replaced, others kept.
func (s *Sim) writeLayout(ctx context.Context, devs []Status) error {
	var objs []sls.Hardware
	seen := map[string]bool{}
	for _, st := range devs {
		p, err := parsePlace(st.BMC)
		if err != nil {
			return err
		}
		if !seen[p.chassisX()] {
			seen[p.chassisX()] = true
			objs = append(objs, chassisHardware(p, fmt.Sprintf("%s:%d", p.switchAddr(), s.cfg.SNMPPort), s.cfg.SNMPUser)...)
		}
		objs = append(objs, nodeHardware(p, st.NID)...)
	}
	for lo := 0; lo < len(objs); lo += layoutChunk {
		chunk := objs[lo:min(lo+layoutChunk, len(objs))]
		// The suite's SLS stores a chunk in one request and one
		// transaction (PUT /v1/bulk/hardware); an SLS without the
		// extension (a shipped one answers 404 or 405), or one refusing
		// the chunk, gets it one object at a time, which says which one.
		if err := s.sls.PutHardwareAll(ctx, chunk); err == nil {
			continue
		}
		if err := s.putEach(ctx, chunk); err != nil {
			return err
		}
	}
	return nil
}

// layoutChunk is how many SLS objects go in one bulk PUT: 5,000 nodes are
// 20,000 objects (about 4 MB of JSON), written in four requests.
const layoutChunk = 5000

// putEach PUTs objs one by one, layoutWriters at a time.
func (s *Sim) putEach(ctx context.Context, objs []sls.Hardware) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(layoutWriters)
	for _, h := range objs {
		g.Go(func() error {
			if _, err := s.sls.PutHardware(gctx, h); err != nil {
				return fmt.Errorf("sls layout %s: %w", h.Xname, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// layoutWriters is how many PUTs putEach keeps in flight: SLS commits the
// PUTs it has at once together, so the more in flight, the fewer commits.
const layoutWriters = 32

// bootEntry creates bss's Default boot entry unless there is one, so a node
// HSM knows gets a script naming it.
func (s *Sim) bootEntry(ctx context.Context) error {
	body := fmt.Sprintf(`{"hosts":["Default"],"kernel":%q,"params":"console=ttyS0 hms-sim"}`, s.cfg.Kernel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.BSSURL+"/boot/v1/bootparameters", bytes.NewBufferString(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.hc.Do(req)
	if err != nil {
		return fmt.Errorf("bss boot entry: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusBadRequest { // 400: it exists
		return fmt.Errorf("bss boot entry: status %d", resp.StatusCode)
	}
	return nil
}

// parsePlace reads a BMC (x#c#s#b#) or node (x#c#s#b#n0) xname of the
// simulated shape: River from x3000, Mountain (parseMountain) x1000-x2999.
func parsePlace(x string) (place, error) {
	var p place
	var n int
	if c, _ := fmt.Sscanf(x, "x%d", &p.cabinet); c == 1 && p.cabinet >= FirstMountainCabinet && p.cabinet < FirstCabinet {
		return parseMountain(x)
	}
	if c, _ := fmt.Sscanf(x, "x%dc%ds%db%dn%d", &p.cabinet, &p.chassis, &p.slot, &p.bmc, &n); c < 4 || n != 0 {
		return p, fmt.Errorf("%q is not a node BMC or node xname (x<cab>c<chassis>s<slot>b<bmc>[n0]): %w", x, errInvalid)
	}
	if p.cabinet < FirstCabinet || p.chassis < 0 || p.chassis >= 4 || p.slot < 1 || p.slot > slotsPerChassis || p.bmc < 0 || p.bmc >= bmcsPerSlot {
		return p, fmt.Errorf("%s: outside the simulated shape (x%d+, c0-3, s1-%d, b0-%d): %w", x, FirstCabinet, slotsPerChassis, bmcsPerSlot-1, errInvalid)
	}
	p.port = (p.slot-1)*bmcsPerSlot + p.bmc + 1
	if got := p.bmcX(); fmt.Sprintf("%sn0", got) != x && got != x {
		return p, fmt.Errorf("%q: write it as %s: %w", x, got, errInvalid)
	}
	return p, nil
}

var (
	errExists   = problem.ErrConflict
	errInvalid  = problem.ErrInvalid
	errNotFound = problem.ErrNotFound
)
