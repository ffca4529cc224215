package ctl

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/ipxe/bss"
	"github.com/hmsuite/hms/layout/sls"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// NodeView is one node as every daemon sees it: what `hms describe node`
// shows. A part the daemon does not know is null.
type NodeView struct {
	Xname string `json:"Xname"`
	// Layout is the node's SLS entry.
	Layout *sls.Hardware `json:"Layout"`
	// State is the node's HSM component.
	State *hsm.Component `json:"State"`
	// StateChanges are the node's newest State and Flag changes in HSM (at
	// most 5), newest first.
	StateChanges []hsm.StateChange `json:"StateChanges"`
	// StateChangesNote says why there are none when HSM keeps no history.
	StateChangesNote string `json:"StateChangesNote,omitempty"`
	// BMC is HSM's Redfish endpoint of the node's BMC.
	BMC *hsm.RedfishEndpoint `json:"BMC"`
	// Interfaces are the node's Ethernet interfaces in HSM.
	Interfaces []hsm.EthernetInterface `json:"EthernetInterfaces"`
	// Boot is what BSS boots the node with (its own entry, else by MAC,
	// NID, role or Default).
	Boot *bss.BootParams `json:"BootParameters"`
	// Heartbeat is hbtd's view of the node.
	Heartbeat *agent.HBState `json:"Heartbeat"`
	// BootFetches are when the node last fetched its boot script and
	// cloud-init user-data from BSS.
	BootFetches []bss.EndpointAccess `json:"BootFetches"`
	// DHCP is the lease of the node's last DHCP exchange with bss's DHCP
	// server (of any of its MACs): MAC, address, state, when, and the
	// relay (giaddr) it came through. Null when bss runs no DHCP server or
	// holds no lease of the node.
	DHCP *bss.DHCPLease `json:"DHCPLease"`
	// Errors are the queries that failed (a daemon down).
	Errors []string `json:"Errors,omitempty"`
}

// nodeStateChanges is how many of a node's state changes describe shows.
const nodeStateChanges = 5

func defineDescribe(*flag.FlagSet) execFunc {
	return func(ctx context.Context, s *session, args []string) error {
		x, err := xname.Parse(args[0])
		if err != nil || x.Type() != xname.Node {
			return usagef("describe node: %q is not a node xname (such as x3000c0s1b0n0)", args[0])
		}
		v := s.describeNode(ctx, x.String())
		if err := s.emit(v, table{text: func(w io.Writer, _ bool) error { return writeNode(w, v) }}); err != nil {
			return err
		}
		switch {
		case len(v.Errors) > 0:
			return failf("describe node %s: %d queries failed", v.Xname, len(v.Errors))
		case v.Layout == nil && v.State == nil && v.Boot == nil:
			return failf("describe node %s: %w: neither sls, hsm nor bss knows it", v.Xname, problem.ErrNotFound)
		}
		return nil
	}
}

// describeNode asks every daemon about node at once.
func (s *session) describeNode(ctx context.Context, node string) NodeView {
	v := NodeView{Xname: node}
	var mu sync.Mutex
	var wg sync.WaitGroup
	// query runs get; a missing object is not an error, it stays null.
	query := func(get func() error) {
		wg.Go(func() {
			if err := get(); err != nil && !errors.Is(err, problem.ErrNotFound) {
				mu.Lock()
				v.Errors = append(v.Errors, explain(err).Error())
				mu.Unlock()
			}
		})
	}
	query(func() error { h, err := s.sls().GetHardware(ctx, node); v.Layout = ptrIf(h, err); return err })
	query(func() error { c, err := s.hsm().Component(ctx, node); v.State = ptrIf(c, err); return err })
	query(func() error {
		h, err := s.hsm().ComponentHistoryOf(ctx, node, url.Values{"limit": {strconv.Itoa(nodeStateChanges)}})
		if errors.Is(err, problem.ErrNotFound) {
			v.StateChangesNote = noHistory
		}
		v.StateChanges = hsm.StateHistoryList{Components: []hsm.StateHistory{h}}.Newest(nodeStateChanges)
		return err
	})
	query(func() error {
		e, err := s.hsm().RedfishEndpoint(ctx, xname.Parent(node))
		v.BMC = ptrIf(e, err)
		return err
	})
	query(func() error {
		var err error
		v.Interfaces, err = s.hsm().EthernetInterfaces(ctx, url.Values{"ComponentID": {node}})
		return err
	})
	query(func() error { hb, err := s.hbtd().State(ctx, node); v.Heartbeat = ptrIf(hb, err); return err })
	query(func() error {
		var err error
		v.BootFetches, err = s.bss().EndpointHistory(ctx, node)
		return err
	})
	wg.Wait()
	if err := s.bootOf(ctx, &v); err != nil && !errors.Is(err, problem.ErrNotFound) {
		v.Errors = append(v.Errors, explain(err).Error())
	}
	if err := s.leaseOf(ctx, &v); err != nil && !errors.Is(err, problem.ErrNotFound) {
		v.Errors = append(v.Errors, explain(err).Error())
	}
	return v
}

// leaseOf finds the node's newest DHCP lease in bss: by the MACs HSM has
// for it, else by its xname (bss's name filter, which needs bss's HSM
// cache to know the node's MACs).
func (s *session) leaseOf(ctx context.Context, v *NodeView) error {
	q := bss.LeaseQuery{Names: []string{v.Xname}}
	for _, e := range v.Interfaces {
		q.MACs = append(q.MACs, e.MACAddress)
	}
	if len(q.MACs) > 0 {
		q.Names = nil
	}
	ls, err := s.bss().Leases(ctx, q)
	if err != nil {
		return err
	}
	for i := range ls {
		if v.DHCP == nil || ls[i].LastExchange.After(v.DHCP.LastExchange) {
			v.DHCP = &ls[i]
		}
	}
	return nil
}

// bootOf finds what BSS boots the node with, trying its keys in BSS's
// order: the xname, its MACs, its NID, its role, then Default. BSS resolves
// the xname alone only once its HSM cache has the node; asking key by key
// with HSM's answers does not wait for that.
func (s *session) bootOf(ctx context.Context, v *NodeView) error {
	keys := []bss.ParamsQuery{{Names: []string{v.Xname}}}
	for _, e := range v.Interfaces {
		keys = append(keys, bss.ParamsQuery{MACs: []string{e.MACAddress}})
	}
	if c := v.State; c != nil {
		if c.NID != nil {
			keys = append(keys, bss.ParamsQuery{NIDs: []int32{int32(*c.NID)}})
		}
		if c.Role != "" {
			keys = append(keys, bss.ParamsQuery{Names: []string{c.Role}})
		}
	}
	keys = append(keys, bss.ParamsQuery{Names: []string{bss.TagDefault}})
	for _, k := range keys {
		bps, err := s.bss().BootParams(ctx, k)
		if errors.Is(err, problem.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if len(bps) > 0 {
			v.Boot = &bps[0]
			return nil
		}
	}
	return nil
}

func ptrIf[T any](v T, err error) *T {
	if err != nil {
		return nil
	}
	return &v
}

// writeNode is the table form of v: one section per daemon.
func writeNode(w io.Writer, v NodeView) error {
	tw := bufio.NewWriter(w)
	kv := func(k, val string) { fmt.Fprintf(tw, "  %-17s %s\n", k+":", or(val, "-")) }
	fmt.Fprintf(tw, "Node %s\n", v.Xname)
	fmt.Fprintln(tw, "Layout (sls):")
	if v.Layout == nil {
		kv("entry", "none")
	} else {
		p, _ := v.Layout.Node()
		kv("class", string(v.Layout.Class))
		kv("NID", fmt.Sprint(p.NID))
		kv("role", strings.Trim(p.Role+"/"+p.SubRole, "/"))
		kv("aliases", strings.Join(p.Aliases, ","))
	}
	fmt.Fprintln(tw, "State (hsm):")
	if c := v.State; c == nil {
		kv("component", "none")
	} else {
		kv("state", c.State+" (flag "+c.Flag+")")
		kv("enabled", boolp(c.Enabled))
		kv("role", strings.Trim(c.Role+"/"+c.SubRole, "/"))
		kv("NID", intp(c.NID))
		kv("arch/class", strings.Trim(c.Arch+"/"+c.Class, "/"))
	}
	tabs := tabwriter.NewWriter(tw, 0, 0, 1, ' ', 0)
	writeChanges(tabs, fmt.Sprintf("  %-17s", "changes:"), v.StateChanges, v.StateChangesNote) // lined up with kv
	tabs.Flush()
	fmt.Fprintf(tw, "BMC endpoint (hsm, %s):\n", xname.Parent(v.Xname))
	if e := v.BMC; e == nil {
		kv("endpoint", "none")
	} else {
		kv("FQDN", e.FQDN)
		kv("enabled", boolp(e.Enabled))
		kv("discovery", strings.TrimSpace(e.DiscoveryInfo.LastDiscoveryStatus+" "+timep(e.DiscoveryInfo.LastDiscoveryAttempt)))
	}
	fmt.Fprintln(tw, "Ethernet interfaces (hsm):")
	if len(v.Interfaces) == 0 {
		kv("interfaces", "none")
	}
	for _, e := range v.Interfaces {
		var ips []string
		for _, ip := range e.IPAddresses {
			ips = append(ips, ip.IPAddress)
		}
		kv(e.MACAddress, strings.Join(ips, ","))
	}
	writeBoot(tw, kv, v)
	return tw.Flush()
}

func writeBoot(tw io.Writer, kv func(k, v string), v NodeView) {
	fmt.Fprintln(tw, "Boot (bss):")
	if b := v.Boot; b == nil {
		kv("parameters", "none")
	} else {
		entry := append(append([]string(nil), b.Hosts...), b.MACs...)
		for _, n := range b.NIDs {
			entry = append(entry, fmt.Sprint("nid ", n))
		}
		kv("entry", strings.Join(entry, ","))
		kv("kernel", b.Kernel)
		kv("initrd", b.Initrd)
		kv("params", b.Params)
	}
	if l := v.DHCP; l != nil {
		via := "direct"
		if l.Relay != "" {
			via = "relay " + l.Relay
		}
		at := "-"
		if !l.LastExchange.IsZero() {
			at = l.LastExchange.UTC().Format(time.RFC3339)
		}
		kv("last dhcp", fmt.Sprintf("%s %s %s (%s, %s)", at, l.MACAddress, l.IPAddress, l.State, via))
	}
	for _, f := range v.BootFetches {
		kv("last "+f.Endpoint, time.Unix(f.LastEpoch, 0).UTC().Format(time.RFC3339))
	}
	fmt.Fprintln(tw, "Heartbeat (hbtd):")
	switch {
	case v.Heartbeat == nil:
		kv("heartbeating", "unknown")
	case v.Heartbeat.Heartbeating:
		kv("heartbeating", "yes")
	default:
		kv("heartbeating", "no")
	}
	for _, e := range v.Errors {
		fmt.Fprintf(tw, "Error: %s\n", e)
	}
}
