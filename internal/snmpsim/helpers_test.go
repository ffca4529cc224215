package snmpsim

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/hmsuite/hms/internal/snmpsim/snmpsimtest"
)

// testSwitch is a small switch: two ports, a MAC on each.
var testSwitch = Switch{
	Ports: []Port{{Bridge: 1, IfIndex: 1001, Name: "ethernet1/1/1"}, {Bridge: 2, IfIndex: 1002, Name: "ethernet1/1/2"}},
	FDB:   []Entry{{MAC: "aa:00:00:00:00:01", Bridge: 1, VLAN: 4}, {MAC: "aa:00:00:00:00:02", Bridge: 2, VLAN: 4}},
}

// oidQFdb is the Q-BRIDGE forwarding table's root; testFDB what it holds.
const oidQFdb = "1.3.6.1.2.1.17.7.1.2.2.1.2"

var testFDB = map[string]int{
	"." + oidQFdb + ".4.170.0.0.0.0.1": 1,
	"." + oidQFdb + ".4.170.0.0.0.0.2": 2,
}

// testEngineID is the engine ID of the agents whose ID a test needs to know.
var testEngineID = []byte{0x80, 0, 0, 0, 5, 't', 'e', 's', 't'}

// clock is a settable clock for snmpEngineTime.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// newTestAgent returns an agent serving testSwitch to cfg's community and users.
func newTestAgent(t testing.TB, cfg Config) *Agent {
	t.Helper()
	a, err := NewAgent(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Set(testSwitch); err != nil {
		t.Fatal(err)
	}
	return a
}

// serve runs a on a loopback UDP port until the test ends and returns the port.
func serve(t *testing.T, a *Agent) uint16 {
	t.Helper()
	return uint16(snmpsimtest.ServeLoopback(t, a).Port)
}

// usmParams are u's USM parameters as a manager holds them.
func usmParams(u User) *gosnmp.UsmSecurityParameters {
	priv := u.PrivProtocol
	if priv == 0 {
		priv = gosnmp.NoPriv
	}
	return &gosnmp.UsmSecurityParameters{UserName: u.Name, AuthenticationProtocol: u.AuthProtocol,
		AuthenticationPassphrase: u.AuthPassphrase, PrivacyProtocol: priv, PrivacyPassphrase: u.PrivPassphrase}
}

// level is u's security level.
func level(u User) gosnmp.SnmpV3MsgFlags {
	if u.PrivProtocol == 0 || u.PrivProtocol == gosnmp.NoPriv {
		return gosnmp.AuthNoPriv
	}
	return gosnmp.AuthPriv
}

// v3Client is gosnmp's manager for u at port, connected.
func v3Client(t *testing.T, port uint16, u User, timeout time.Duration) *gosnmp.GoSNMP {
	t.Helper()
	g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: port, Version: gosnmp.Version3, SecurityModel: gosnmp.UserSecurityModel,
		MsgFlags: level(u), SecurityParameters: usmParams(u), Timeout: timeout, Retries: 0, MaxOids: gosnmp.MaxOids,
		MaxRepetitions: 10, Context: t.Context()}
	if err := g.Connect(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Conn.Close() })
	return g
}

// fdbOf reads a walk of the Q-BRIDGE table.
func fdbOf(t *testing.T, pdus []gosnmp.SnmpPDU) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, p := range pdus {
		out[p.Name] = int(gosnmp.ToBigInt(p.Value).Int64())
	}
	return out
}

// encode is a request from u at flags to an engine of the given ID, boots
// and time, as gosnmp's manager sends it.
func encode(t testing.TB, u User, flags gosnmp.SnmpV3MsgFlags, engineID []byte, boots, at uint32) []byte {
	t.Helper()
	sp := usmParams(u)
	sp.AuthoritativeEngineID, sp.AuthoritativeEngineBoots, sp.AuthoritativeEngineTime = string(engineID), boots, at
	if flags&gosnmp.AuthNoPriv == 0 {
		sp.AuthenticationProtocol, sp.PrivacyProtocol = gosnmp.NoAuth, gosnmp.NoPriv
	}
	if flags&gosnmp.AuthPriv != gosnmp.AuthPriv {
		sp.PrivacyProtocol = gosnmp.NoPriv
	}
	if err := sp.InitSecurityKeys(); err != nil {
		t.Fatal(err)
	}
	g := &gosnmp.GoSNMP{Version: gosnmp.Version3, SecurityModel: gosnmp.UserSecurityModel, MsgFlags: flags,
		SecurityParameters: sp, Logger: gosnmp.NewLogger(nil), ContextEngineID: string(engineID)}
	b, err := g.SnmpEncodePacket(gosnmp.GetNextRequest, []gosnmp.SnmpPDU{{Name: "." + oidQFdb, Type: gosnmp.Null}}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// probe is an engine discovery request (RFC 3414 4), as gosnmp sends it.
func probe(t testing.TB, flags gosnmp.SnmpV3MsgFlags) []byte {
	t.Helper()
	p := &gosnmp.SnmpPacket{Version: gosnmp.Version3, MsgFlags: flags, SecurityModel: gosnmp.UserSecurityModel,
		SecurityParameters: &gosnmp.UsmSecurityParameters{Logger: gosnmp.NewLogger(nil)}, PDUType: gosnmp.GetRequest,
		RequestID: 4242, MsgID: 77, Logger: gosnmp.NewLogger(nil)}
	b, err := p.MarshalMsg()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeAnswer parses an agent's v3 answer with u's keys (unauthenticated
// answers need none); it does not check the MAC.
func decodeAnswer(t *testing.T, b []byte, u User) *gosnmp.SnmpPacket {
	t.Helper()
	m, ok := parseV3(b)
	if !ok {
		t.Fatalf("answer is not an SNMPv3 message: %x", b)
	}
	sp, flags := usmParams(u), gosnmp.SnmpV3MsgFlags(m.flags)&gosnmp.AuthPriv
	if flags == gosnmp.NoAuthNoPriv {
		sp = &gosnmp.UsmSecurityParameters{UserName: "-"}
	}
	g := &gosnmp.GoSNMP{Version: gosnmp.Version3, SecurityModel: gosnmp.UserSecurityModel, MsgFlags: flags,
		SecurityParameters: sp, Logger: gosnmp.NewLogger(nil)}
	p, err := g.SnmpDecodePacket(b)
	if err != nil {
		t.Fatalf("answer does not decode: %v", err)
	}
	return p
}

func itoa(n uint16) string { return strconv.Itoa(int(n)) }
