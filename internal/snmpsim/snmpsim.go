// Package snmpsim is an in-process SNMP agent that serves a simulated
// management switch: its forwarding table (Q-BRIDGE-MIB and BRIDGE-MIB),
// bridge port to ifIndex, and ifName. It answers GET, GETNEXT and GETBULK
// over v2c (a community) and v3 (USM users, authNoPriv and authPriv, with
// engine discovery, time windows and the usmStats reports of RFC 3414),
// within the sizes net-snmp's snmpd keeps to (limits.go), with gosnmp's
// packet and USM code, so tests and `hms sim` can run hundreds of switches
// on loopback without an snmpd each.
package snmpsim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gosnmp/gosnmp"
)

// Port is one switch port: its bridge port number, ifIndex and ifName.
type Port struct {
	Bridge, IfIndex int
	Name            string
}

// Entry is one learned MAC (aa:bb:cc:dd:ee:ff) on a bridge port and VLAN.
type Entry struct {
	MAC    string
	Bridge int
	VLAN   int
}

// Switch is what the agent serves.
type Switch struct {
	Ports []Port
	FDB   []Entry
	// NoQBridge leaves the Q-BRIDGE table out, as old switches do, so
	// clients must fall back to BRIDGE-MIB.
	NoQBridge bool
	// Extra are more variables (OID without leading dot -> value), e.g.
	// garbage for fuzzing clients.
	Extra map[string]gosnmp.SnmpPDU
}

// Config is who an agent answers.
type Config struct {
	// Community is the v2c community; "" answers no v2c.
	Community string
	// Users are the v3 users; none answers no v3.
	Users []User
	// EngineID is the v3 snmpEngineID (5 to 32 octets); random when nil,
	// so each agent is a new engine to its managers.
	EngineID []byte
	// Boots is snmpEngineBoots (1 when 0).
	Boots uint32
	// Now is the clock of snmpEngineTime (time.Now when nil).
	Now func() time.Time
}

// Agent is one simulated switch. Its table can be replaced while it serves.
type Agent struct {
	community string
	v3        *engine // nil: no v3
	log       gosnmp.Logger

	mu   sync.RWMutex
	oids []oid // sorted
	vals map[string]gosnmp.SnmpPDU
	reqs int
	// from counts the GETNEXT and GETBULK requests by the OID they start
	// from (without a leading dot) when that is not one of the agent's
	// own: a walk starts from its table's root once, then goes on from
	// the last OID it was given (which is one).
	from map[string]int
}

type oid struct {
	nums []uint32
	key  string
}

// New returns an agent answering the v2c community only.
func New(community string) *Agent {
	a, _ := NewAgent(Config{Community: community}) // no users: no error
	return a
}

// NewAgent returns an agent answering cfg's community and users; the
// users' keys are localised to its engine ID here, once.
func NewAgent(cfg Config) (*Agent, error) {
	a := &Agent{community: cfg.Community, log: gosnmp.NewLogger(nil), vals: map[string]gosnmp.SnmpPDU{}, from: map[string]int{}}
	if len(cfg.Users) > 0 {
		e, err := newEngine(cfg, a.log)
		if err != nil {
			return nil, err
		}
		a.v3 = e
	}
	return a, nil
}

// Set replaces what the agent serves.
func (a *Agent) Set(sw Switch) error {
	vals := map[string]gosnmp.SnmpPDU{}
	put := func(name string, t gosnmp.Asn1BER, v any) { vals[name] = gosnmp.SnmpPDU{Name: name, Type: t, Value: v} }
	for _, p := range sw.Ports {
		put(fmt.Sprintf("1.3.6.1.2.1.17.1.4.1.2.%d", p.Bridge), gosnmp.Integer, p.IfIndex)
		put(fmt.Sprintf("1.3.6.1.2.1.31.1.1.1.1.%d", p.IfIndex), gosnmp.OctetString, []byte(p.Name))
	}
	for _, e := range sw.FDB {
		hw, err := net.ParseMAC(e.MAC)
		if err != nil || len(hw) != 6 {
			return fmt.Errorf("snmpsim: MAC %q: %v", e.MAC, err)
		}
		idx := fmt.Sprintf("%d.%d.%d.%d.%d.%d", hw[0], hw[1], hw[2], hw[3], hw[4], hw[5])
		put("1.3.6.1.2.1.17.4.3.1.2."+idx, gosnmp.Integer, e.Bridge)
		if !sw.NoQBridge {
			put(fmt.Sprintf("1.3.6.1.2.1.17.7.1.2.2.1.2.%d.%s", max(e.VLAN, 1), idx), gosnmp.Integer, e.Bridge)
		}
	}
	for k, v := range sw.Extra {
		v.Name = k
		vals[k] = v
	}
	oids := make([]oid, 0, len(vals))
	for k := range vals {
		nums, err := parseOID(k)
		if err != nil {
			return err
		}
		oids = append(oids, oid{nums: nums, key: k})
	}
	slices.SortFunc(oids, func(x, y oid) int { return slices.Compare(x.nums, y.nums) })
	a.mu.Lock()
	a.oids, a.vals = oids, vals
	a.mu.Unlock()
	return nil
}

// Requests returns how many requests the agent answered.
func (a *Agent) Requests() int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.reqs
}

// Walks returns how many walks of the table at root (an OID, as
// "1.3.6.1.2.1.17.7.1.2.2.1.2") the agent was asked for: the GETNEXT or
// GETBULK requests that start from root itself.
func (a *Agent) Walks(root string) int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.from[strings.TrimPrefix(root, ".")]
}

func parseOID(s string) ([]uint32, error) {
	parts := strings.Split(strings.Trim(s, "."), ".")
	out := make([]uint32, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("snmpsim: OID %q: %w", s, err)
		}
		out[i] = uint32(n)
	}
	return out, nil
}

// Serve answers requests on conn until ctx ends; it closes conn.
func (a *Agent) Serve(ctx context.Context, conn net.PacketConn) error {
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	buf := make([]byte, 65536)
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("snmpsim: read: %w", err)
		}
		out, ok := a.answer(buf[:n])
		if ok {
			_, _ = conn.WriteTo(out, from)
		}
	}
}

// answer decodes one request and encodes its response; garbage, a
// version or community the agent does not answer, and requests other than
// reads get no answer, as from a real agent.
func (a *Agent) answer(req []byte) ([]byte, bool) {
	switch v, _ := messageVersion(req); {
	case v == int64(gosnmp.Version2c) && a.community != "":
		return a.answerV2c(req)
	case v == int64(gosnmp.Version3) && a.v3 != nil:
		return a.answerV3(req)
	}
	return nil, false
}

func (a *Agent) answerV2c(req []byte) ([]byte, bool) {
	dec := &gosnmp.GoSNMP{Logger: a.log}
	p, err := dec.SnmpDecodePacket(req)
	if err != nil || p.Version != gosnmp.Version2c || p.Community != a.community {
		return nil, false
	}
	vars, ok := a.handle(p)
	if !ok {
		return nil, false
	}
	resp := &gosnmp.SnmpPacket{Version: p.Version, Community: p.Community, PDUType: gosnmp.GetResponse,
		RequestID: p.RequestID, Variables: vars, Logger: a.log}
	return bounded(resp, p, noMaxSize, func(r *gosnmp.SnmpPacket) ([]byte, bool) {
		out, err := r.MarshalMsg()
		return out, err == nil
	})
}

// handle counts a read request and returns its answer's variables; false
// for other requests.
func (a *Agent) handle(p *gosnmp.SnmpPacket) ([]gosnmp.SnmpPDU, bool) {
	if p.PDUType != gosnmp.GetRequest && p.PDUType != gosnmp.GetNextRequest && p.PDUType != gosnmp.GetBulkRequest {
		return nil, false
	}
	a.mu.Lock()
	a.reqs++
	if len(p.Variables) > 0 && (p.PDUType == gosnmp.GetNextRequest || p.PDUType == gosnmp.GetBulkRequest) {
		name := strings.TrimPrefix(p.Variables[0].Name, ".")
		if _, own := a.vals[name]; !own {
			a.from[name]++
		}
	}
	a.mu.Unlock()
	var vars []gosnmp.SnmpPDU
	switch p.PDUType {
	case gosnmp.GetRequest:
		for _, v := range p.Variables {
			vars = append(vars, a.get(v.Name))
		}
	case gosnmp.GetNextRequest:
		for _, v := range p.Variables {
			vars = append(vars, a.next(v.Name))
		}
	default:
		vars = a.bulk(p)
	}
	return vars, true
}

func (a *Agent) get(name string) gosnmp.SnmpPDU {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if v, ok := a.vals[strings.TrimPrefix(name, ".")]; ok {
		return v
	}
	return gosnmp.SnmpPDU{Name: name, Type: gosnmp.NoSuchObject}
}

func (a *Agent) next(name string) gosnmp.SnmpPDU {
	nums, err := parseOID(name)
	if err != nil {
		return gosnmp.SnmpPDU{Name: name, Type: gosnmp.EndOfMibView}
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	i, found := slices.BinarySearchFunc(a.oids, nums, func(o oid, t []uint32) int { return slices.Compare(o.nums, t) })
	if found {
		i++
	}
	if i >= len(a.oids) {
		return gosnmp.SnmpPDU{Name: name, Type: gosnmp.EndOfMibView}
	}
	return a.vals[a.oids[i].key]
}

func (a *Agent) bulk(p *gosnmp.SnmpPacket) []gosnmp.SnmpPDU {
	var out []gosnmp.SnmpPDU
	nr := min(int(p.NonRepeaters), len(p.Variables))
	for _, v := range p.Variables[:nr] {
		out = append(out, a.next(v.Name))
	}
	cur := make([]string, 0, len(p.Variables)-nr)
	for _, v := range p.Variables[nr:] {
		cur = append(cur, v.Name)
	}
	reps := int(p.MaxRepetitions)
	if len(cur) > 0 {
		reps = min(reps, maxBulkResponses/len(cur))
	}
	for range reps {
		done := true
		for i, name := range cur {
			v := a.next(name)
			out = append(out, v)
			if v.Type != gosnmp.EndOfMibView {
				cur[i], done = v.Name, false
			}
		}
		if done {
			break
		}
	}
	return out
}
