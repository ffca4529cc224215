package ipxe

import (
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/hmsuite/hms/internal/xname"
)

// Node is what BSS knows of one HSM node: its component, MACs and IPs.
type Node struct {
	Component
	MACs []string     // normalised (lower case, colons), HSM order
	IPs  []netip.Addr // from the node's EthernetInterfaces
}

// EndpointEnabled stands in for hms-bss's ComponentEndpoints flag: a node
// HSM has disabled is booted as unknown. Nodes HSM learnt without a Redfish
// walk have no ComponentEndpoint, so the component's Enabled is used.
func (n *Node) EndpointEnabled() bool { return n.Enabled == nil || *n.Enabled }

// host is n as /boot/v1/hosts shows it.
func (n *Node) host() Host {
	h := Host{Component: n.Component, FQDN: n.ID, MAC: n.MACs, EndpointEnabled: n.EndpointEnabled()}
	if len(h.MAC) == 0 {
		h.MAC = nil
	}
	return h
}

// Cache holds HSM's nodes, indexed by xname, MAC, NID and IP. SCNs and
// periodic resyncs (see Syncer) keep it fresh; requests only read it.
// Nodes are never modified in place: a change stores a new *Node.
type Cache struct {
	mu     sync.RWMutex
	nodes  map[string]*Node
	byMAC  map[string]*Node
	byNID  map[int]*Node
	byIP   map[netip.Addr]*Node
	synced bool
	// during is non-nil while a full read of HSM is under way: the SCNs
	// applied meanwhile, replayed over the read (which may predate them).
	during []*SCN

	// changed is closed and replaced on every change (a broadcast for
	// waiters such as tests and the DHCP server).
	changed chan struct{}
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{nodes: map[string]*Node{}, byMAC: map[string]*Node{}, byNID: map[int]*Node{},
		byIP: map[netip.Addr]*Node{}, changed: make(chan struct{})}
}

// Changed returns a channel closed at the next change of the cache.
func (c *Cache) Changed() <-chan struct{} {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.changed
}

// Synced reports whether a full read of HSM has completed.
func (c *Cache) Synced() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.synced
}

// notifyLocked wakes the waiters of Changed; c.mu is held for writing.
func (c *Cache) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Node returns the node with the given xname.
func (c *Cache) Node(xname string) (*Node, bool) {
	c.mu.RLock()
	n, ok := c.nodes[xname]
	c.mu.RUnlock()
	return n, ok
}

// ByMAC returns the node owning mac (any spelling HSM accepts).
func (c *Cache) ByMAC(mac string) (*Node, bool) {
	c.mu.RLock()
	n, ok := c.byMAC[normMAC(mac)]
	c.mu.RUnlock()
	return n, ok
}

// ByNID returns the node with the given NID.
func (c *Cache) ByNID(nid int) (*Node, bool) {
	c.mu.RLock()
	n, ok := c.byNID[nid]
	c.mu.RUnlock()
	return n, ok
}

// ByIP returns the node one of whose interfaces has ip.
func (c *Cache) ByIP(ip netip.Addr) (*Node, bool) {
	c.mu.RLock()
	n, ok := c.byIP[ip.Unmap()]
	c.mu.RUnlock()
	return n, ok
}

// KnownMAC is the lookup the DHCP server (ipxe/dhcp) makes for a client:
// the xname of the node HSM gives mac to, and that interface's first IPv4
// address (invalid when HSM has none). ok is false for a MAC HSM does not
// tie to a node.
func (c *Cache) KnownMAC(mac net.HardwareAddr) (xname string, ip netip.Addr, ok bool) {
	n, ok := c.ByMAC(mac.String())
	if !ok {
		return "", netip.Addr{}, false
	}
	for _, a := range n.IPs {
		if a.Is4() {
			return n.ID, a, true
		}
	}
	return n.ID, netip.Addr{}, true
}

// Nodes returns every node, by xname.
func (c *Cache) Nodes() []*Node {
	c.mu.RLock()
	out := make([]*Node, 0, len(c.nodes))
	for _, n := range c.nodes {
		out = append(out, n)
	}
	c.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Node) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Len is the number of nodes.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.nodes)
}

// buildNodes joins components with their interfaces.
func buildNodes(comps []Component, eths []EthernetInterface) map[string]*Node {
	nodes := make(map[string]*Node, len(comps))
	for _, comp := range comps {
		nodes[comp.ID] = &Node{Component: comp}
	}
	for _, ei := range eths {
		n := nodes[ei.ComponentID]
		if n == nil {
			continue
		}
		addInterface(n, ei)
	}
	return nodes
}

func addInterface(n *Node, ei EthernetInterface) {
	if mac := normMAC(ei.MACAddress); mac != "" && !slices.Contains(n.MACs, mac) {
		n.MACs = append(n.MACs, mac)
	}
	for _, ip := range ei.IPAddresses {
		if a, err := netip.ParseAddr(ip.IPAddress); err == nil && !slices.Contains(n.IPs, a.Unmap()) {
			n.IPs = append(n.IPs, a.Unmap())
		}
	}
}

// beginRead marks the start of a full read of HSM (see replaceAll).
func (c *Cache) beginRead() {
	c.mu.Lock()
	c.during = []*SCN{}
	c.mu.Unlock()
}

// replaceAll installs a full read of HSM, then replays over it the SCNs
// applied since beginRead: HSM may have answered before they happened.
func (c *Cache) replaceAll(nodes map[string]*Node) {
	byMAC, byNID, byIP := map[string]*Node{}, map[int]*Node{}, map[netip.Addr]*Node{}
	for _, n := range nodes {
		index(n, byMAC, byNID, byIP)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nodes, c.byMAC, c.byNID, c.byIP, c.synced = nodes, byMAC, byNID, byIP, true
	during := c.during
	c.during = nil
	for _, scn := range during {
		c.applyLocked(scn)
	}
	c.notifyLocked()
}

func index(n *Node, byMAC map[string]*Node, byNID map[int]*Node, byIP map[netip.Addr]*Node) {
	for _, m := range n.MACs {
		byMAC[m] = n
	}
	if n.NID != nil {
		byNID[*n.NID] = n
	}
	for _, a := range n.IPs {
		byIP[a] = n
	}
}

// putLocked replaces (or adds) one node; c.mu is held for writing.
func (c *Cache) putLocked(n *Node) {
	if old := c.nodes[n.ID]; old != nil {
		c.unindexLocked(old)
	}
	c.nodes[n.ID] = n
	index(n, c.byMAC, c.byNID, c.byIP)
}

func (c *Cache) unindexLocked(old *Node) {
	for _, m := range old.MACs {
		if c.byMAC[m] == old {
			delete(c.byMAC, m)
		}
	}
	if old.NID != nil && c.byNID[*old.NID] == old {
		delete(c.byNID, *old.NID)
	}
	for _, a := range old.IPs {
		if c.byIP[a] == old {
			delete(c.byIP, a)
		}
	}
}

// put installs freshly read nodes, and drops the listed xnames HSM no
// longer has.
func (c *Cache) put(nodes []*Node, gone []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range nodes {
		c.putLocked(n)
	}
	for _, id := range gone {
		if old := c.nodes[id]; old != nil {
			c.unindexLocked(old)
			delete(c.nodes, id)
		}
	}
	c.notifyLocked()
}

// applySCN applies the fields an SCN carries to the nodes it names and
// returns the xnames the cache does not know (to be read from HSM).
func (c *Cache) applySCN(scn *SCN) (unknown []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.during != nil {
		c.during = append(c.during, scn)
	}
	unknown = c.applyLocked(scn)
	c.notifyLocked()
	return unknown
}

// applyLocked applies scn; c.mu is held for writing.
func (c *Cache) applyLocked(scn *SCN) (unknown []string) {
	for _, id := range scn.Components {
		old := c.nodes[id]
		if old == nil {
			if xname.IsNode(id) {
				unknown = append(unknown, id)
			}
			continue
		}
		n := *old
		if scn.State != "" {
			n.State = scn.State
		}
		if scn.Flag != "" {
			n.Flag = scn.Flag
		}
		if scn.Enabled != nil {
			en := *scn.Enabled
			n.Enabled = &en
		}
		if scn.Role != "" {
			n.Role, n.SubRole = scn.Role, scn.SubRole
		}
		if scn.SoftwareStatus != "" {
			n.SoftwareStatus = scn.SoftwareStatus
		}
		if scn.NID != nil {
			nid := *scn.NID
			n.NID = &nid
		}
		c.putLocked(&n)
	}
	return unknown
}
