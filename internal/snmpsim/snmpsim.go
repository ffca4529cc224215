// Package snmpsim is an in-process SNMP v2c agent that serves a simulated
// management switch: its forwarding table (Q-BRIDGE-MIB and BRIDGE-MIB),
// bridge port to ifIndex, and ifName. It answers GET, GETNEXT and GETBULK
// with gosnmp's packet code, so tests and `hms sim` can run hundreds of
// switches on loopback without an snmpd each. It does not speak v3 (the
// tests run Debian snmpd for that).
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

// Agent is one simulated switch. Its table can be replaced while it serves.
type Agent struct {
	community string

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

// New returns an agent answering the v2c community.
func New(community string) *Agent {
	return &Agent{community: community, vals: map[string]gosnmp.SnmpPDU{}, from: map[string]int{}}
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
	dec := &gosnmp.GoSNMP{Logger: gosnmp.NewLogger(nil)}
	buf := make([]byte, 65536)
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("snmpsim: read: %w", err)
		}
		out, ok := a.answer(dec, buf[:n])
		if ok {
			_, _ = conn.WriteTo(out, from)
		}
	}
}

// answer decodes one request and encodes its response; garbage and a
// wrong community get no answer, as from a real agent.
func (a *Agent) answer(dec *gosnmp.GoSNMP, req []byte) ([]byte, bool) {
	p, err := dec.SnmpDecodePacket(req)
	if err != nil || p.Version != gosnmp.Version2c || p.Community != a.community {
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
	resp := &gosnmp.SnmpPacket{Version: p.Version, Community: p.Community, PDUType: gosnmp.GetResponse,
		RequestID: p.RequestID, Logger: dec.Logger}
	switch p.PDUType {
	case gosnmp.GetRequest:
		for _, v := range p.Variables {
			resp.Variables = append(resp.Variables, a.get(v.Name))
		}
	case gosnmp.GetNextRequest:
		for _, v := range p.Variables {
			resp.Variables = append(resp.Variables, a.next(v.Name))
		}
	case gosnmp.GetBulkRequest:
		resp.Variables = a.bulk(p)
	default:
		return nil, false
	}
	out, err := resp.MarshalMsg()
	return out, err == nil
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
	reps := min(int(p.MaxRepetitions), 200)
	cur := make([]string, 0, len(p.Variables)-nr)
	for _, v := range p.Variables[nr:] {
		cur = append(cur, v.Name)
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
