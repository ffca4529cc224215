package dhcp

import (
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"

	"github.com/hmsuite/hms/ipxe/lease"
)

// Drop reasons, as counted in dhcp_dropped_total.
const (
	DropMalformed   = "malformed"    // not a BOOTREQUEST with an Ethernet address, or unparsable
	DropUnknownType = "unknown_type" // a message type a server does not take (OFFER, ACK, ...)
	DropNoSubnet    = "no_subnet"    // giaddr (or our link) is in none of our subnets
	DropExhausted   = "exhausted"    // no free address for a DISCOVER
	DropOtherServer = "other_server" // a REQUEST for another server's offer (proxy mode: any on port 67)
	DropNotPXE      = "not_pxe"      // proxy mode: not a PXE client
	DropNoLease     = "no_lease"     // RELEASE or DECLINE of a lease that is not this client's
	DropOverload    = "overload"     // too many packets in hand (Server), DISCOVERs first
)

// Result is what handling one packet decided: a reply to send once Change
// (if any) is stored, or the reason it was dropped.
type Result struct {
	Reply  *dhcpv4.DHCPv4
	Change *Change
	Drop   string
}

// outcome is a Result with the reply not yet encoded (the server encodes
// it into its datagram; Handle builds Result.Reply from it).
type outcome struct {
	ans    answer
	reply  bool // ans is to be sent
	change *Change
	drop   string
}

// Handler decides the reply to each packet from its configuration, the
// lease table and HSM's view of the MAC. It does no I/O: Server stores the
// Change and sends the Reply.
type Handler struct {
	cfg    Config
	lookup Lookup
	now    func() time.Time

	// sid, wire and types are options as they go on the wire (54; each
	// subnet's, parallel to cfg.Subnets; 53), encoded once: replies share
	// them (an encoded reply only reads its options).
	sid   []byte
	wire  []subnetWire
	types [dhcpv4.MessageTypeInform + 1][]byte // option 53 of each type
	// nextServer (option 66), the boot script URL and the boot files are
	// built once too.
	nextServer, scriptURL string
	files                 [3]bootFile // BIOS, EFI64, ARM64

	mu sync.Mutex // guards t
	t  *table
}

// subnetWire is one subnet's options, encoded.
type subnetWire struct {
	prefix            string // the subnet, as lease events name it
	mask, router, dns []byte
	// times are options 51, 58 and 59 for known MACs (0) and unknown ones (1).
	times [2][3][]byte
}

func newSubnetWire(s *Subnet) subnetWire {
	w := subnetWire{prefix: s.Prefix.String(), mask: dhcpv4.OptSubnetMask(net.CIDRMask(s.Prefix.Bits(), 32)).Value.ToBytes()}
	if s.Router.IsValid() {
		w.router = dhcpv4.OptRouter(s.Router.AsSlice()).Value.ToBytes()
	}
	if len(s.DNS) > 0 {
		ips := make([]net.IP, len(s.DNS))
		for i, d := range s.DNS {
			ips[i] = d.AsSlice()
		}
		w.dns = dhcpv4.OptDNS(ips...).Value.ToBytes()
	}
	for i, lt := range []time.Duration{s.Lease, s.UnknownLease} {
		w.times[i] = [3][]byte{dhcpv4.OptIPAddressLeaseTime(lt).Value.ToBytes(),
			dhcpv4.OptRenewTimeValue(lt / 2).Value.ToBytes(), dhcpv4.OptRebindingTimeValue(lt * 7 / 8).Value.ToBytes()}
	}
	return w
}

// NewHandler returns a handler over an empty table; Load fills it.
func NewHandler(cfg Config, lookup Lookup, now func() time.Time) *Handler {
	if lookup == nil {
		lookup = noLookup{}
	}
	if now == nil {
		now = time.Now
	}
	if !cfg.NextServer.IsValid() {
		cfg.NextServer = cfg.ServerID
	}
	for i := range cfg.Subnets {
		s := &cfg.Subnets[i]
		if s.Lease <= 0 {
			s.Lease = DefaultLease
		}
		if s.UnknownLease <= 0 {
			s.UnknownLease = min(DefaultUnknownLease, s.Lease)
		}
	}
	h := &Handler{cfg: cfg, lookup: lookup, now: now, t: newTable(), sid: dhcpv4.OptServerIdentifier(cfg.ServerID.AsSlice()).Value.ToBytes()}
	for i := range cfg.Subnets {
		h.wire = append(h.wire, newSubnetWire(&cfg.Subnets[i]))
	}
	for t := range h.types {
		h.types[t] = []byte{byte(t)}
	}
	h.nextServer, h.scriptURL = cfg.NextServer.String(), cfg.BootURL+"/boot/v1/bootscript?mac=${net0/mac}"
	for i, f := range [...]string{cfg.Files.BIOS, cfg.Files.EFI64, cfg.Files.ARM64} {
		if f != "" {
			h.files[i] = bootFile{name: f, url: cfg.BootURL + "/ipxe/" + f}
		}
	}
	return h
}

// Load puts stored leases into the table (at start).
func (h *Handler) Load(ls []*Lease) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range ls {
		h.t.put(l)
	}
}

// Leases returns a copy of the leases in the table.
func (h *Handler) Leases() []Lease {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Lease, 0, len(h.t.byIP))
	for _, l := range h.t.byIP {
		out = append(out, *l)
	}
	return out
}

// Handle decides what to answer req, a message insomniacslk's parser
// built (the server itself parses with parseRequest and encodes the
// outcome with appendAnswer; Handle is the same decision for tests and
// tools).
func (h *Handler) Handle(req *dhcpv4.DHCPv4) Result {
	r := &request{}
	r.fromMessage(req)
	return h.result(h.handle(r))
}

// HandleBootServer decides a packet that came to the PXE boot server port
// (BootServerPort) of a proxy-mode server: a REQUEST or INFORM from a
// booting client gets the proxy ACK.
func (h *Handler) HandleBootServer(req *dhcpv4.DHCPv4) Result {
	r := &request{}
	r.fromMessage(req)
	if r.op != byte(dhcpv4.OpcodeBootRequest) || len(req.ClientHWAddr) != 6 {
		return Result{Drop: DropMalformed}
	}
	if !h.cfg.Proxy {
		return Result{Drop: DropUnknownType}
	}
	return h.result(h.proxy(r, true))
}

func (h *Handler) result(o outcome) Result {
	res := Result{Change: o.change, Drop: o.drop}
	if o.reply {
		res.Reply = h.message(&o.ans)
	}
	return res
}

// handle decides what to answer req.
func (h *Handler) handle(req *request) outcome {
	if req.op != byte(dhcpv4.OpcodeBootRequest) || req.hlen != 6 {
		return outcome{drop: DropMalformed}
	}
	if h.cfg.Proxy {
		return h.proxy(req, false)
	}
	i := h.subnet(req)
	if i < 0 {
		return outcome{drop: DropNoSubnet}
	}
	c := h.client(req, i)
	h.mu.Lock()
	defer h.mu.Unlock()
	c.mac = h.macString(req.mac())
	switch req.msgType() {
	case dhcpv4.MessageTypeDiscover:
		return h.discover(&c)
	case dhcpv4.MessageTypeRequest:
		return h.request(&c)
	case dhcpv4.MessageTypeRelease:
		return h.release(&c, lease.Release)
	case dhcpv4.MessageTypeDecline:
		return h.decline(&c)
	case dhcpv4.MessageTypeInform:
		return h.inform(&c)
	}
	return outcome{drop: DropUnknownType}
}

// subnet picks the subnet of req (its index in cfg.Subnets; -1: none): the
// one holding giaddr when relayed, else our own link's.
func (h *Handler) subnet(req *request) int {
	gi := req.relay()
	relayed := gi.IsValid()
	for i := range h.cfg.Subnets {
		s := &h.cfg.Subnets[i]
		if relayed && s.Prefix.Contains(gi) || !relayed && !s.Relayed {
			return i
		}
	}
	return -1
}

// client is one request with what is known of its sender.
type client struct {
	req   *request
	sub   *Subnet
	wire  *subnetWire // sub's encoded options
	mac   string
	known bool
	xname string
	hsmIP netip.Addr // HSM's address for the MAC (invalid: none)
	now   time.Time
}

// client is req from the sender's point of view, its MAC string aside
// (macString, under h.mu).
func (h *Handler) client(req *request, i int) client {
	xname, ip, known := h.lookup.KnownMAC(req.mac())
	return client{req: req, sub: &h.cfg.Subnets[i], wire: &h.wire[i], known: known, xname: xname, hsmIP: ip, now: h.now()}
}

// macString is mac as net.HardwareAddr.String writes it; the string of the
// MAC's lease when it has one (no new string for a client the table
// knows: the REQUEST after a DISCOVER, a renewal). h.mu is held.
func (h *Handler) macString(mac net.HardwareAddr) string {
	const digits = "0123456789abcdef"
	var buf [6*3 - 1]byte
	if len(mac) != 6 {
		return mac.String()
	}
	for i, b := range mac {
		if i > 0 {
			buf[3*i-1] = ':'
		}
		buf[3*i], buf[3*i+1] = digits[b>>4], digits[b&0xf]
	}
	if l := h.t.byMAC[string(buf[:])]; l != nil {
		return l.MAC
	}
	return string(buf[:])
}

// relay is the giaddr c's request came through (invalid: none).
func (c *client) relay() netip.Addr { return c.req.relay() }

func (c *client) leaseTime() time.Duration {
	if c.known {
		return c.sub.Lease
	}
	return c.sub.UnknownLease
}

// pick chooses the address to offer c: HSM's reservation, else its current
// lease or offer, else the address it asks for, else the pool's next free.
func (h *Handler) pick(c *client) netip.Addr {
	if c.known && c.sub.Prefix.Contains(c.hsmIP) && h.t.free(c.hsmIP, c.mac, c.now) {
		return c.hsmIP
	}
	if l := h.t.byMAC[c.mac]; l != nil && l.Subnet == c.sub.Prefix && h.allowed(c, l.IP) {
		return l.IP
	}
	if want, ok := c.req.addrOpt(dhcpv4.OptionRequestedIPAddress); ok && h.allowed(c, want) {
		return want
	}
	return h.t.scan(c.sub, func(a netip.Addr) bool { return h.allowed(c, a) })
}

// allowed reports whether c may have a: in the pool, free, and not an
// address HSM reserves for another node.
func (h *Handler) allowed(c *client, a netip.Addr) bool {
	if a == c.hsmIP && c.sub.Prefix.Contains(a) {
		return h.t.free(a, c.mac, c.now)
	}
	return c.sub.Contains(a) && h.t.free(a, c.mac, c.now) && !h.lookup.Reserved(a)
}

func (h *Handler) discover(c *client) outcome {
	a := h.pick(c)
	if !a.IsValid() {
		return outcome{drop: DropExhausted}
	}
	if l := h.t.byIP[a]; l == nil || l.State != Bound || l.MAC != c.mac {
		h.t.put(&Lease{IP: a, MAC: c.mac, Subnet: c.sub.Prefix, State: Offered, Expires: c.now.Add(OfferHold), Known: c.known,
			Updated: c.now, Relay: c.relay()})
	}
	return outcome{ans: h.reply(c, dhcpv4.MessageTypeOffer, a), reply: true}
}

// request handles the three kinds of DHCPREQUEST (RFC 2131 4.3.2):
// SELECTING names a server, INIT-REBOOT asks for an address, RENEWING and
// REBINDING send it as ciaddr. Being authoritative, we NAK an address the
// client may not have.
func (h *Handler) request(c *client) outcome {
	sid, hasSID := c.req.addrOpt(dhcpv4.OptionServerIdentifier)
	if hasSID && sid != h.cfg.ServerID {
		if l := h.t.byMAC[c.mac]; l != nil && l.State == Offered {
			h.t.remove(l)
		}
		return outcome{drop: DropOtherServer}
	}
	want, ok := c.req.clientIP(), true
	if !want.IsValid() {
		want, ok = c.req.addrOpt(dhcpv4.OptionRequestedIPAddress)
	}
	if !ok || !h.allowed(c, want) {
		return outcome{ans: h.nak(c), reply: true}
	}
	prev := h.t.byMAC[c.mac]
	l := &Lease{IP: want, MAC: c.mac, Subnet: c.sub.Prefix, State: Bound, Expires: c.now.Add(c.leaseTime()),
		Hostname: c.req.hostname(), Known: c.known, Updated: c.now, Relay: c.relay()}
	h.t.put(l)
	fresh := prev == nil || prev.State != Bound || prev.IP != want || prev.unstored
	publish := announce(c, prev, fresh)
	if publish {
		l.announced = uint32(c.now.Unix())
	} else {
		l.announced = prev.announced
	}
	// The change and its copy of the lease in one allocation.
	cl := &struct {
		c Change
		l Lease
	}{l: *l}
	cl.c.Put = &cl.l
	ch := &cl.c
	if publish {
		ch.Event = h.event(c, lease.Commit, l)
	}
	// A MAC HSM does not know is written to HSM the first time it is bound.
	ch.NewMAC = !c.known && fresh
	return outcome{ans: h.reply(c, dhcpv4.MessageTypeAck, want), reply: true, change: ch}
}

// announce reports whether the REQUEST c acknowledges, binding the MAC
// whose lease was prev (nil: none; fresh: a new binding or address), is
// published as a commit event. A new binding, a changed address, a MAC
// HSM no longer knows, and a device that starts over (SELECTING after a
// DISCOVER, or INIT-REBOOT: no ciaddr; a BMC put back, a node rebooted)
// are. A renewal (RENEWING or REBINDING: ciaddr set) of an unchanged
// binding is not, as a rule: at 10,000 devices renewing every half lease
// it made most of the bus traffic, and the lease row is written all the
// same. But a consumer holding an unknown MAC's lease (reds: the discovery
// token acts for a MAC while its lease stands) must learn that it goes
// on, or it takes the lease for over at the end the last event gave: so
// the renewal of an unknown MAC is published when its binding was last
// published half a lease time ago or more (the client's own T1), at most
// once per half lease however often it renews. A MAC HSM knows is not
// (nobody acts on its lease). When a binding was last published is kept
// in memory only: after a restart, the first renewal of each unknown MAC
// is published.
func announce(c *client, prev *Lease, fresh bool) bool {
	renewal := c.req.clientIP().IsValid()
	if fresh || !renewal || (prev.Known && !c.known) {
		return true
	}
	return !c.known && c.now.Unix()-int64(prev.announced) >= int64(c.leaseTime()/2/time.Second)
}

// markUnstored marks the bindings whose commit failed (cs: the changes of that
// transaction): their ACKs were not sent, and the table, which decided them,
// must not take them for bindings already published and written to HSM when
// the client asks again, or a renewal's event would wait half a lease and a
// new unknown MAC would never reach HSM.
func (h *Handler) markUnstored(cs []*Change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range cs {
		if c.Put == nil || c.Put.State != Bound {
			continue
		}
		if l := h.t.byMAC[c.Put.MAC]; l != nil && l.IP == c.Put.IP && l.State == Bound {
			l.unstored = true
		}
	}
}

func (h *Handler) release(c *client, kind lease.Kind) outcome {
	ci := c.req.clientIP()
	l := h.t.byMAC[c.mac]
	if l == nil || l.State != Bound || (ci.IsValid() && l.IP != ci) {
		return outcome{drop: DropNoLease}
	}
	h.t.remove(l)
	return outcome{change: &Change{Delete: l.IP, Event: h.event(c, kind, l)}}
}

// decline takes the address out of the pool for a lease time: another host
// uses it.
func (h *Handler) decline(c *client) outcome {
	a, ok := c.req.addrOpt(dhcpv4.OptionRequestedIPAddress)
	l := h.t.byMAC[c.mac]
	if !ok || l == nil || l.IP != a {
		return outcome{drop: DropNoLease}
	}
	h.t.remove(l)
	d := &Lease{IP: a, Subnet: c.sub.Prefix, State: Declined, Expires: c.now.Add(c.sub.Lease)}
	h.t.put(d)
	return outcome{change: &Change{Put: ptr(*d), Event: h.event(c, lease.Decline, l)}}
}

// inform answers a client that has its address: options only (RFC 2131
// 4.3.5), no lease.
func (h *Handler) inform(c *client) outcome {
	return outcome{ans: h.reply(c, dhcpv4.MessageTypeAck, netip.Addr{}), reply: true}
}

func (h *Handler) event(c *client, kind lease.Kind, l *Lease) *lease.Event {
	e := &lease.Event{Kind: kind, MACAddress: c.mac, IPAddress: l.IP.String(), Hostname: c.req.hostname(),
		VendorClass: string(c.req.vendorClass()), Arch: archName(c.req), Subnet: c.wire.prefix,
		Known: c.known, Time: c.now.UTC()}
	if gi := c.relay(); gi.IsValid() {
		e.Relay = gi.String()
	}
	if kind == lease.Commit {
		e.Expires = l.Expires.UTC()
	}
	return e
}

func ptr[T any](v T) *T { return &v }

// Expire ends the leases past their time: a bound one is deleted with an
// Expire event, a decline is deleted, an offer vanishes.
func (h *Handler) Expire() []*Change {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	bound, declined := h.t.expired(now)
	out := make([]*Change, 0, len(bound)+len(declined))
	for _, l := range bound {
		out = append(out, &Change{Delete: l.IP, Event: &lease.Event{Kind: lease.Expire, MACAddress: l.MAC,
			IPAddress: l.IP.String(), Hostname: l.Hostname, Subnet: l.Subnet.String(), Known: l.Known,
			Expires: l.Expires.UTC(), Time: now.UTC()}})
	}
	for _, l := range declined {
		out = append(out, &Change{Delete: l.IP})
	}
	return out
}

// Len is the number of addresses in the table.
func (h *Handler) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.t.byIP)
}
