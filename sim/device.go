package sim

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"sync"
	"time"

	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/internal/pause"
	"github.com/hmsuite/hms/internal/redfishsim"
)

// systemPath is the Redfish system of a simulated BMC's one node.
const systemPath = redfishsim.Root + "/Systems/Node0"

// Status is what the sim reports of one simulated BMC and its node.
type Status struct {
	BMC      string `json:"bmc"`
	Node     string `json:"node,omitempty"` // "" for a chassis controller
	NID      int    `json:"nid"`
	BMCAddr  string `json:"bmc_addr,omitempty"` // HOST:PORT once leased and listening
	BMCMAC   string `json:"bmc_mac"`
	NodeMAC  string `json:"node_mac,omitempty"`
	NodeAddr string `json:"node_addr,omitempty"`
	// Power is the node's PowerState on its BMC: On or Off ("" for a
	// chassis controller, which has no node).
	Power string `json:"power"`
	// Phase is the node's progress: off, dhcp, bootscript, heartbeat
	// (beating), or removed; "chassis" for a chassis controller.
	Phase string `json:"phase"`
	// Times of the last power-on and of each stage after it (zero: not yet).
	PowerOn   time.Time `json:"power_on,omitzero"`
	Leased    time.Time `json:"leased,omitzero"`
	Booted    time.Time `json:"booted,omitzero"`
	Heartbeat time.Time `json:"heartbeat,omitzero"`
	// The last DHCP renewals of the BMC's and the node's leases.
	BMCRenewed  time.Time `json:"bmc_renewed,omitzero"`
	NodeRenewed time.Time `json:"node_renewed,omitzero"`
}

// device is one simulated BMC with its node.
type device struct {
	p       place
	bmc     *redfishsim.BMC
	bmcMAC  net.HardwareAddr
	nodeMAC net.HardwareAddr
	power   chan string   // newest PowerState, from the BMC's OnPower
	kill    chan struct{} // closed by kill-bmc or remove
	gone    chan struct{} // closed by remove: the node's goroutine ends

	mu       sync.Mutex
	st       Status
	killOnce sync.Once
	goneOnce sync.Once
}

// newDevice makes the BMC at p: a River node BMC (its MAC derived from
// its xname), a Mountain node card (its MAC MEDS's, from its place), each
// with one node, or a Mountain chassis controller (MEDS's MAC, no node).
func newDevice(p place, nid int) (*device, error) {
	d := &device{p: p, power: make(chan string, 1), kill: make(chan struct{}), gone: make(chan struct{})}
	x := p.bmcX()
	tree := redfishsim.Template(1)
	if p.kind == chassisBMC {
		tree = redfishsim.TemplateChassis(MountainSlots)
	}
	var err error
	if p.kind == riverNode {
		d.bmcMAC, err = net.ParseMAC(redfishsim.MAC(x, "bmc:eth0"))
	} else {
		d.bmcMAC, err = mountainMAC(p)
	}
	if err != nil {
		return nil, err
	}
	// The BMC reports the MAC it leases with on its Manager's NIC, so HSM's
	// walk names the interface reds registered it by.
	d.bmc, err = redfishsim.New(redfishsim.Config{Xname: x, Tree: tree, OnPower: d.onPower,
		MACs: map[string]string{"bmc:eth0": d.bmcMAC.String()}})
	if err != nil {
		return nil, err
	}
	d.st = Status{BMC: x, Node: p.nodeX(), NID: nid, BMCMAC: d.bmcMAC.String(), Power: "On", Phase: "off"}
	if p.kind == chassisBMC {
		d.st.Power, d.st.Phase = "", "chassis"
		return d, nil
	}
	if d.nodeMAC, err = net.ParseMAC(redfishsim.MAC(x, "s0:eth0")); err != nil {
		return nil, err
	}
	d.st.NodeMAC = d.nodeMAC.String()
	return d, nil
}

// onPower runs under the BMC's lock: it only hands the newest state on.
func (d *device) onPower(_, state string) {
	for {
		select {
		case d.power <- state:
			return
		default:
			select {
			case <-d.power:
			default:
			}
		}
	}
}

func (d *device) status() Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.st
}

func (d *device) update(fn func(*Status)) {
	d.mu.Lock()
	fn(&d.st)
	d.mu.Unlock()
}

// stopBMC kills the BMC (kill-bmc, remove): it stops answering and leaves
// the switch.
func (d *device) stopBMC() { d.killOnce.Do(func() { close(d.kill) }) }

// remove takes the device out: its BMC stops and its node's goroutine
// ends (a device added again at the same place is a new one).
func (d *device) remove() {
	d.stopBMC()
	d.goneOnce.Do(func() { close(d.gone) })
}

// runBMC gets the BMC's address over DHCP (River: cabled on its switch
// port sw first, so discovery finds it there; Mountain: sw is nil), listens
// on it and serves Redfish until ctx ends or the BMC is killed.
func (d *device) runBMC(ctx context.Context, s *Sim, sw *mgmtSwitch) error {
	if sw != nil {
		sw.learn(d.p.port, d.bmcMAC.String(), d)
		defer sw.forget(d.p.port, d) // not a device added at the same place since
	}
	var ln net.Listener
	g, err := retry(ctx, d.kill, func() (grant, error) {
		return s.relay.lease(ctx, d.bmcMAC, func(ip netip.Addr) (err error) {
			if ln != nil {
				ln.Close()
			}
			ln, err = net.Listen("tcp", netip.AddrPortFrom(ip, uint16(s.cfg.BMCPort)).String())
			return err
		})
	})
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return nil // killed or stopped while leasing
	}
	d.update(func(st *Status) { st.BMCAddr = ln.Addr().String() })
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.relay.keep(bctx, d.kill, d.bmcMAC, g, func() { d.update(func(st *Status) { st.BMCRenewed = time.Now() }) })
	go func() {
		select {
		case <-d.kill:
			cancel()
		case <-bctx.Done():
		}
	}()
	return d.bmc.Serve(bctx, ln, s.tls)
}

// runNode follows the BMC's power state: On boots the node, Off stops it;
// it returns when ctx ends or the device is removed.
func (d *device) runNode(ctx context.Context, s *Sim, on bool) {
	var stop context.CancelFunc = func() {}
	var done chan struct{}
	boot := func() {
		nctx, cancel := context.WithCancel(ctx)
		stop, done = cancel, make(chan struct{})
		d.update(func(st *Status) {
			st.Power, st.Phase, st.PowerOn = "On", "dhcp", time.Now()
			st.Leased, st.Booted, st.Heartbeat, st.NodeAddr = time.Time{}, time.Time{}, time.Time{}, ""
		})
		go func() { defer close(done); d.boot(nctx, s) }()
	}
	halt := func() {
		stop()
		if done != nil {
			<-done
		}
		done = nil
		d.update(func(st *Status) { st.Power, st.Phase = "Off", "off" })
	}
	if on {
		boot()
	}
	for {
		select {
		case <-ctx.Done():
			halt()
			return
		case <-d.gone:
			halt()
			d.update(func(st *Status) { st.Phase = "removed" })
			return
		case state := <-d.power:
			halt()
			if state == "On" {
				boot()
			}
		}
	}
}

var (
	xnameParam = regexp.MustCompile(`(?:^|\s)xname=(\S+)`)
	nidParam   = regexp.MustCompile(`(?:^|\s)nid=(\d+)`)
	tokenParam = regexp.MustCompile(`(?:^|\s)` + token.CmdlineParam + `=(\S+)`)
)

// boot is the node from power-on: DHCP, its boot script from bss until the
// script names it (bss knows it once HSM has walked its BMC), then
// heartbeats with the heartbeat agent until ctx ends (power off).
func (d *device) boot(ctx context.Context, s *Sim) {
	g, err := retry(ctx, nil, func() (grant, error) { return s.relay.lease(ctx, d.nodeMAC, nil, netboot()...) })
	if err != nil {
		return
	}
	d.update(func(st *Status) { st.NodeAddr, st.Leased, st.Phase = g.ip.String(), time.Now(), "bootscript" })
	go s.relay.keep(ctx, nil, d.nodeMAC, g, func() { d.update(func(st *Status) { st.NodeRenewed = time.Now() }) })
	var xname, nid, tok string
	// The wait doubles up to bootRetryGrowth times BootRetry: 5,000 nodes
	// waiting minutes for their BMCs' discovery, each asking every second
	// on a new connection, cost the suite and the sim a good part of their
	// CPU (a real node boots the discovery image meanwhile).
	for wait := s.cfg.BootRetry; xname == ""; wait = min(2*wait, bootRetryGrowth*s.cfg.BootRetry) {
		script, err := s.bootscript(ctx, d.nodeMAC.String(), g.ip)
		if m := xnameParam.FindStringSubmatch(script); err == nil && m != nil {
			xname = m[1]
			if n := nidParam.FindStringSubmatch(script); n != nil {
				nid = n[1]
			}
			tok = scriptToken(script)
			break
		}
		if !pause.For(ctx, wait) {
			return
		}
	}
	d.update(func(st *Status) { st.Booted, st.Phase = time.Now(), "heartbeat" })
	a := &agent.Agent{Client: s.nodeClient(xname, tok, g.ip), XNames: []string{xname}, Hostname: "nid" + nid, NID: nid,
		Interval: s.cfg.HeartbeatInterval, Log: s.cfg.Log.With("node", xname)}
	for a.BeatOnce(ctx) != nil {
		if !pause.For(ctx, s.cfg.BootRetry) {
			return
		}
		// Refused, perhaps for want of a token: bss gives one once HSM
		// has the node's address; a real node would reboot.
		if script, err := s.bootscript(ctx, d.nodeMAC.String(), g.ip); err == nil && scriptToken(script) != tok {
			tok = scriptToken(script)
			a.Client = s.nodeClient(xname, tok, g.ip)
		}
	}
	d.update(func(st *Status) { st.Heartbeat = time.Now() })
	if pause.For(ctx, a.Interval) {
		_ = a.Run(ctx) // returns when ctx ends
	}
}

// bootRetryGrowth bounds a node's wait between two boot script requests:
// at most this many times Config.BootRetry.
const bootRetryGrowth = 4

// bootscript fetches the iPXE script bss gives mac, from the node's address
// from (bss hands a node token only to a node asking from its own address).
func (s *Sim) bootscript(ctx context.Context, mac string, from netip.Addr) (string, error) {
	req, err := http.NewRequestWithContext(withSource(ctx, from), http.MethodGet, s.cfg.BSSURL+"/boot/v1/bootscript?mac="+mac, nil)
	if err != nil {
		return "", err
	}
	resp, err := s.nodeHC.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil || resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("bootscript: %d %v", resp.StatusCode, err)
	}
	return string(b), nil
}

// retry calls fn until it succeeds, backing off from 200ms to 5s, until ctx
// ends or stop is closed.
func retry[T any](ctx context.Context, stop <-chan struct{}, fn func() (T, error)) (T, error) {
	wait := 200 * time.Millisecond
	for {
		v, err := fn()
		if err == nil {
			return v, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, ctx.Err()
		case <-stop:
			t.Stop()
			return v, context.Canceled
		case <-t.C:
		}
		wait = min(2*wait, 5*time.Second)
	}
}
