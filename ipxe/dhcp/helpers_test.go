package dhcp

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/ipxe/lease"
)

// t0 is the tests' clock start.
var t0 = time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// hsmView is HSM's view as the BSS cache gives it: MAC -> (xname, IP).
type hsmView map[string]struct {
	xname string
	ip    netip.Addr
}

func (v hsmView) KnownMAC(mac net.HardwareAddr) (string, netip.Addr, bool) {
	n, ok := v[mac.String()]
	return n.xname, n.ip, ok
}

func (v hsmView) Reserved(ip netip.Addr) bool {
	for _, n := range v {
		if n.ip == ip {
			return true
		}
	}
	return false
}

// switchPub is a bus.Publisher in front of a Memory bus that can be
// switched off (a Kafka outage).
type switchPub struct {
	*bus.Memory
	mu   sync.Mutex
	down bool
}

func (p *switchPub) setDown(down bool) {
	p.mu.Lock()
	p.down = down
	p.mu.Unlock()
}

func (p *switchPub) Publish(ctx context.Context, topic string, msgs ...bus.Message) error {
	p.mu.Lock()
	down := p.down
	p.mu.Unlock()
	if down {
		return errors.New("bus down")
	}
	return p.Memory.Publish(ctx, topic, msgs...)
}

// testSubnets: the server's link 10.1.0.0/24 (pool .10-.20) and a relayed
// 10.2.0.0/24 (pool .100-.101).
func testSubnets() []Subnet {
	return []Subnet{
		{Prefix: netip.MustParsePrefix("10.1.0.0/24"), First: netip.MustParseAddr("10.1.0.10"), Last: netip.MustParseAddr("10.1.0.20"),
			Router: netip.MustParseAddr("10.1.0.1"), DNS: []netip.Addr{netip.MustParseAddr("10.1.0.2")}, Lease: time.Hour},
		{Prefix: netip.MustParsePrefix("10.2.0.0/24"), First: netip.MustParseAddr("10.2.0.100"), Last: netip.MustParseAddr("10.2.0.101"),
			Relayed: true},
	}
}

func testConfig() Config {
	return Config{Subnets: testSubnets(), ServerID: netip.MustParseAddr("10.1.0.1"), NextServer: netip.MustParseAddr("10.1.0.5"),
		BootURL: "http://10.1.0.5:27778", Files: DefaultBootFiles()}
}

// harness is a Server on loopback over a real database (SQLite, or
// PostgreSQL through newHarnessOn), with a settable clock, a switchable bus
// and HSM's view of three MACs.
type harness struct {
	t     *testing.T
	db    string
	clk   *clock
	pub   *switchPub
	view  hsmView
	srv   *Server
	reg   *prometheus.Registry
	cfg   Config
	hsm   HSM // unknown MACs go there (nil: none)
	sql   *sqldb.DB
	stop  func()
	conns []*net.UDPConn
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	return newHarnessHSM(t, cfg, nil)
}

// newHarnessHSM is newHarness with the server writing unknown MACs to hsm.
func newHarnessHSM(t *testing.T, cfg Config, hsm HSM) *harness {
	t.Helper()
	return newHarnessOn(t, testpeer.SQLite(t), cfg, hsm)
}

// newHarnessOn is newHarnessHSM with bss's database at db (a SQLite file or
// a PostgreSQL URL).
func newHarnessOn(t *testing.T, db string, cfg Config, hsm HSM) *harness {
	t.Helper()
	h := &harness{t: t, db: db, clk: &clock{now: t0},
		pub: &switchPub{Memory: bus.NewMemory()}, cfg: cfg, hsm: hsm,
		view: hsmView{"02:00:00:00:00:01": {xname: "x3000c0s1b0n0", ip: netip.MustParseAddr("10.1.0.50")},
			"02:00:00:00:00:02": {xname: "x3000c0s2b0n0"}}}
	t.Cleanup(func() { h.pub.Close() })
	h.start()
	return h
}

// start opens the database and runs a server on it.
func (h *harness) start() {
	t := h.t
	t.Helper()
	db, err := sqldb.Open(t.Context(), h.db, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.reg = prometheus.NewRegistry()
	srv, err := Listen(t.Context(), ServerConfig{Handler: h.cfg, Listen: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, ReplyToPeer: true,
		BootServer: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, Lookup: h.view, Publisher: h.pub, HSM: h.hsm, Now: h.clk.Now, Registerer: h.reg}, db)
	if err != nil {
		t.Fatal(err)
	}
	h.srv, h.sql = srv, db
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	var once sync.Once
	h.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("run: %v", err)
			}
			db.Close()
		})
	}
	t.Cleanup(h.stop)
}

// restart stops the server and starts another on the same database.
func (h *harness) restart() {
	h.stop()
	h.start()
}

// exchange sends req from a fresh socket and returns the reply (nil when
// none comes within a second: a dropped packet).
func (h *harness) exchange(req *dhcpv4.DHCPv4) *dhcpv4.DHCPv4 {
	h.t.Helper()
	return h.exchangeRaw(req.ToBytes())
}

func (h *harness) exchangeRaw(b []byte) *dhcpv4.DHCPv4 {
	h.t.Helper()
	return h.exchangeWith(h.srv.Addr(), b)
}

// exchangeWith sends b to addr and returns the reply (nil: none).
func (h *harness) exchangeWith(addr *net.UDPAddr, b []byte) *dhcpv4.DHCPv4 {
	t := h.t
	t.Helper()
	c, err := net.DialUDP("udp4", nil, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	// A dropped packet gets no answer: the deadline bounds the wait for
	// one, it does not time anything the test asserts.
	c.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 1500)
	n, err := c.Read(buf)
	if err != nil {
		return nil
	}
	r, err := dhcpv4.FromBytes(buf[:n])
	if err != nil {
		t.Fatalf("reply does not parse: %v", err)
	}
	return r
}

func hw(s string) net.HardwareAddr {
	m, err := net.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return m
}

// msg builds a client message.
func msg(t *testing.T, typ dhcpv4.MessageType, mac string, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	t.Helper()
	all := append([]dhcpv4.Modifier{dhcpv4.WithMessageType(typ), dhcpv4.WithHwAddr(hw(mac)),
		dhcpv4.WithTransactionID(dhcpv4.TransactionID{1, 2, 3, 4})}, mods...)
	m, err := dhcpv4.New(all...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func withArch(a iana.Arch) dhcpv4.Modifier { return dhcpv4.WithOption(dhcpv4.OptClientArch(a)) }

func withRequested(ip string) dhcpv4.Modifier {
	return dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.ParseIP(ip)))
}

func withServerID(ip string) dhcpv4.Modifier {
	return dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.ParseIP(ip)))
}

// dora runs DISCOVER, REQUEST and returns the ACK.
func (h *harness) dora(mac string, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	t := h.t
	t.Helper()
	offer := h.exchange(msg(t, dhcpv4.MessageTypeDiscover, mac, mods...))
	if offer == nil || offer.MessageType() != dhcpv4.MessageTypeOffer {
		t.Fatalf("%s: no offer: %v", mac, offer)
	}
	req := append(mods, withRequested(offer.YourIPAddr.String()), withServerID(offer.ServerIdentifier().String()))
	ack := h.exchange(msg(t, dhcpv4.MessageTypeRequest, mac, req...))
	if ack == nil || ack.MessageType() != dhcpv4.MessageTypeAck {
		t.Fatalf("%s: no ack: %v", mac, ack)
	}
	return ack
}

// events reads the lease events published so far (waiting for at least n).
func (h *harness) events(n int) []lease.Event {
	t := h.t
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var out []lease.Event
	err := h.pub.Memory.Consume(ctx, lease.Topic, "test-"+t.Name(), func(_ context.Context, msgs []bus.Message) error {
		for _, m := range msgs {
			e, err := lease.Decode(m.Value)
			if err != nil {
				t.Errorf("event: %v", err)
			}
			if string(m.Key) != e.MACAddress {
				t.Errorf("key %q for MAC %q", m.Key, e.MACAddress)
			}
			out = append(out, e)
		}
		if len(out) >= n {
			cancel()
		}
		return nil
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if len(out) < n {
		t.Fatalf("got %d lease events, want %d: %+v", len(out), n, out)
	}
	return out
}
