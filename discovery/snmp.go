package discovery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/snmpusm"
)

// The OIDs of a switch's forwarding table (BRIDGE-MIB, Q-BRIDGE-MIB) and of
// its port names (IF-MIB), as hms-reds and hms-discovery walk them.
const (
	oidQFdbPort       = "1.3.6.1.2.1.17.7.1.2.2.1.2" // dot1qTpFdbPort.<vlan>.<mac bytes>
	oidFdbPort        = "1.3.6.1.2.1.17.4.3.1.2"     // dot1dTpFdbPort.<mac bytes>
	oidBasePortIfIdx  = "1.3.6.1.2.1.17.1.4.1.2"     // dot1dBasePortIfIndex.<bridge port>
	oidIfName         = "1.3.6.1.2.1.31.1.1.1.1"     // ifName.<ifIndex>
	maxPortNameLength = 64
)

// SNMPCreds are how to log in to a switch: v2c with Community when User is
// empty, else v3 authPriv (authNoPriv when PrivPassword is empty).
type SNMPCreds struct {
	Community                string
	User                     string
	AuthProtocol, AuthPasswd string // MD5, SHA, SHA224, SHA256, SHA384, SHA512 (snmpusm.ParseAuth)
	PrivProtocol, PrivPasswd string // DES, AES (""), AES192, AES256, AES192C, AES256C (snmpusm.ParsePriv)
}

// String never shows a secret.
func (c SNMPCreds) String() string {
	if c.User == "" {
		return "v2c"
	}
	return "v3 user " + c.User
}

// LogValue keeps credentials out of structured logs.
func (c SNMPCreds) LogValue() string { return c.String() }

// Switch is one management switch discovery walks.
type Switch struct {
	// Xname is the switch's SLS name (x3000c0w14).
	Xname string
	// Addr is the agent's HOST:PORT.
	Addr  string
	Creds SNMPCreds
}

// Table is one switch's forwarding table: MAC (aa:bb:..) -> the names of the
// ports it was learned on.
type Table map[string][]string

// SNMPConfig bounds one walk.
type SNMPConfig struct {
	// Timeout is per request (2 s); Retries per request (1).
	Timeout time.Duration
	Retries int
	// MaxRepetitions is the GETBULK size (25).
	MaxRepetitions uint32
}

// SNMPWalker reads forwarding tables over SNMP.
type SNMPWalker struct {
	cfg SNMPConfig
}

// NewSNMPWalker returns a walker; zero fields of cfg take the defaults.
func NewSNMPWalker(cfg SNMPConfig) *SNMPWalker {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Second
	}
	if cfg.Retries < 0 {
		cfg.Retries = 0
	}
	if cfg.MaxRepetitions == 0 {
		cfg.MaxRepetitions = 25
	}
	return &SNMPWalker{cfg: cfg}
}

// Walk reads sw's forwarding table: Q-BRIDGE first, BRIDGE-MIB when the
// switch has no Q-BRIDGE table, then bridge port -> ifIndex -> ifName.
// Errors are ErrUnavailable (no answer, wrong credentials) or ErrInvalid
// (an answer that is not a forwarding table).
func (w *SNMPWalker) Walk(ctx context.Context, sw Switch) (Table, WalkStats, error) {
	var st WalkStats
	g, err := w.session(ctx, sw)
	if err != nil {
		return nil, st, err
	}
	if err := g.Connect(); err != nil {
		return nil, st, problem.Unavailablef("snmp %s: connect: %v", sw.Xname, err)
	}
	defer g.Conn.Close()
	walk := func(oid string) ([]gosnmp.SnmpPDU, error) {
		pdus, err := g.BulkWalkAll(oid)
		if err != nil {
			return nil, problem.Unavailablef("snmp %s: walk %s: %v", sw.Xname, oid, err)
		}
		return pdus, nil
	}
	fdb, err := walk(oidQFdbPort)
	if err != nil {
		return nil, st, err
	}
	macPorts := parseFdb(fdb, oidQFdbPort, true, &st)
	if len(fdb) == 0 {
		if fdb, err = walk(oidFdbPort); err != nil {
			return nil, st, err
		}
		macPorts = parseFdb(fdb, oidFdbPort, false, &st)
	}
	base, err := walk(oidBasePortIfIdx)
	if err != nil {
		return nil, st, err
	}
	names, err := walk(oidIfName)
	if err != nil {
		return nil, st, err
	}
	return buildTable(macPorts, parseIntTable(base, oidBasePortIfIdx, &st), parseNames(names, &st)), st, nil
}

// WalkStats counts what a walk read and what it threw away.
type WalkStats struct {
	Entries, Bad int
}

func (w *SNMPWalker) session(ctx context.Context, sw Switch) (*gosnmp.GoSNMP, error) {
	host, portStr, err := net.SplitHostPort(sw.Addr)
	if err != nil {
		return nil, problem.Invalidf("snmp %s: address %q: want HOST:PORT", sw.Xname, sw.Addr)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, problem.Invalidf("snmp %s: port %q", sw.Xname, portStr)
	}
	g := &gosnmp.GoSNMP{Context: ctx, Target: host, Port: uint16(port), Transport: "udp",
		Timeout: w.cfg.Timeout, Retries: w.cfg.Retries, MaxRepetitions: w.cfg.MaxRepetitions,
		MaxOids: gosnmp.MaxOids, ExponentialTimeout: false}
	c := sw.Creds
	if c.User == "" {
		g.Version, g.Community = gosnmp.Version2c, c.Community
		return g, nil
	}
	auth, err := snmpusm.ParseAuth(c.AuthProtocol)
	if err != nil {
		return nil, problem.Invalidf("snmp %s: SNMPAuthProtocol: %v", sw.Xname, err)
	}
	priv, err := snmpusm.ParsePriv(cmp.Or(c.PrivProtocol, "AES"))
	if err != nil {
		return nil, problem.Invalidf("snmp %s: SNMPPrivProtocol: %v", sw.Xname, err)
	}
	flags := gosnmp.AuthPriv
	if c.PrivPasswd == "" || priv == gosnmp.NoPriv {
		flags, priv = gosnmp.AuthNoPriv, gosnmp.NoPriv
	}
	g.Version, g.SecurityModel, g.MsgFlags = gosnmp.Version3, gosnmp.UserSecurityModel, flags
	g.SecurityParameters = &gosnmp.UsmSecurityParameters{UserName: c.User,
		AuthenticationProtocol: auth, AuthenticationPassphrase: c.AuthPasswd,
		PrivacyProtocol: priv, PrivacyPassphrase: c.PrivPasswd}
	return g, nil
}

// suffix returns the index part of oid under root (both without a leading
// dot), split into numbers.
func suffix(oid, root string) ([]int, bool) {
	rest, ok := strings.CutPrefix(strings.TrimPrefix(oid, "."), root+".")
	if !ok {
		return nil, false
	}
	parts := strings.Split(rest, ".")
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return nil, false
		}
		nums[i] = int(n)
	}
	return nums, true
}

// macPort is one learned MAC and its bridge port.
type macPort struct {
	mac  string
	port int
}

// parseFdb reads dot1qTpFdbPort (vlan first) or dot1dTpFdbPort rows; rows
// that are not a MAC and a port number are counted as bad and skipped.
func parseFdb(pdus []gosnmp.SnmpPDU, root string, vlan bool, st *WalkStats) []macPort {
	out := make([]macPort, 0, len(pdus))
	want := 6
	if vlan {
		want = 7
	}
	for _, p := range pdus {
		idx, ok := suffix(p.Name, root)
		port, okPort := intValue(p)
		if !ok || len(idx) != want || !okPort || port <= 0 {
			st.Bad++
			continue
		}
		b := idx[len(idx)-6:]
		var hw net.HardwareAddr
		for _, n := range b {
			if n > 255 {
				ok = false
			}
			hw = append(hw, byte(n))
		}
		if !ok {
			st.Bad++
			continue
		}
		st.Entries++
		out = append(out, macPort{mac: hw.String(), port: port})
	}
	return out
}

// parseIntTable reads a table indexed by one number whose values are integers.
func parseIntTable(pdus []gosnmp.SnmpPDU, root string, st *WalkStats) map[int]int {
	out := make(map[int]int, len(pdus))
	for _, p := range pdus {
		idx, ok := suffix(p.Name, root)
		v, okV := intValue(p)
		if !ok || len(idx) != 1 || !okV {
			st.Bad++
			continue
		}
		out[idx[0]] = v
	}
	return out
}

// parseNames reads ifName; a name that is not short printable text is bad.
func parseNames(pdus []gosnmp.SnmpPDU, st *WalkStats) map[int]string {
	out := make(map[int]string, len(pdus))
	for _, p := range pdus {
		idx, ok := suffix(p.Name, oidIfName)
		b, okB := p.Value.([]byte)
		if !ok || len(idx) != 1 || !okB || !printable(b) {
			st.Bad++
			continue
		}
		out[idx[0]] = string(b)
	}
	return out
}

func printable(b []byte) bool {
	if len(b) == 0 || len(b) > maxPortNameLength {
		return false
	}
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

func intValue(p gosnmp.SnmpPDU) (int, bool) {
	switch p.Type {
	case gosnmp.Integer, gosnmp.Gauge32, gosnmp.Counter32, gosnmp.Uinteger32, gosnmp.TimeTicks:
		n := gosnmp.ToBigInt(p.Value)
		if !n.IsInt64() || n.Int64() < 0 || n.Int64() > 1<<31 {
			return 0, false
		}
		return int(n.Int64()), true
	}
	return 0, false
}

// buildTable joins the forwarding rows with the port names. A bridge port
// with no dot1dBasePortIfIndex row is taken as its own ifIndex (some
// switches number them alike and leave the table out); a port with no name
// is named by its number.
func buildTable(rows []macPort, ifIndex map[int]int, names map[int]string) Table {
	t := Table{}
	for _, r := range rows {
		idx, ok := ifIndex[r.port]
		if !ok {
			idx = r.port
		}
		name, ok := names[idx]
		if !ok {
			name = strconv.Itoa(idx)
		}
		if !contains(t[r.mac], name) {
			t[r.mac] = append(t[r.mac], name)
		}
	}
	return t
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// errNoSwitches is returned when SLS lists no management switch to walk.
var errNoSwitches = errors.New("no management switch in SLS")

// walkErr names a switch's walk failure for /v1/unknown without secrets.
func walkErr(sw string, err error) string { return fmt.Sprintf("switch %s: %v", sw, err) }
