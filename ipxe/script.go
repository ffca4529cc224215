package ipxe

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
)

// ScriptRequest is a GET /boot/v1/bootscript query: one of MAC, Name or NID
// names the node; Retry counts failed boots; Arch is iPXE's ${buildarch}
// (set once an unknown node chained back); TS is the time of its first ask.
// Caller is the address the request comes from: a known node asking from
// one of its own addresses gets a node token (Config.NodeTokens).
type ScriptRequest struct {
	MAC, Name string
	NID       int
	HasNID    bool
	Retry     int
	Arch, TS  string
	Caller    netip.Addr
}

// describe names the request as hms-bss's "not configured" errors do.
func (r *ScriptRequest) describe(n *Node) string {
	var d string
	switch {
	case r.MAC != "":
		d = "MAC " + r.MAC
	case r.Name != "":
		d = r.Name
	default:
		d = "NID " + strconv.Itoa(r.NID)
	}
	if n != nil && n.ID != r.Name {
		d += " (" + n.ID + ")"
	}
	return d
}

// node finds the HSM node the request names.
func (s *Service) node(r *ScriptRequest) *Node {
	var n *Node
	switch {
	case r.Name != "":
		n, _ = s.cache.Node(r.Name)
	case r.MAC != "":
		n, _ = s.cache.ByMAC(r.MAC)
	case r.HasNID:
		n, _ = s.cache.ByNID(r.NID)
	}
	return n
}

// lookup returns the entry a node boots, in hms-bss order: its own (by the
// name asked or its xname), one of its MACs, its NID, its role, Default.
func (s *Service) lookup(n *Node, r *ScriptRequest) (string, *Entry) {
	if k, e := s.lookupAsked(r); e != nil {
		return k, e
	}
	if n != nil {
		if e, ok := s.store.entry(n.ID); ok {
			return n.ID, e
		}
		for _, m := range n.MACs {
			if e, ok := s.store.entry(m); ok {
				return m, e
			}
		}
		if n.NID != nil {
			if k := nidKey(int32(*n.NID)); k != "" {
				if e, ok := s.store.entry(k); ok {
					return k, e
				}
			}
		}
		if e, ok := s.store.entry(n.Role); ok && n.Role != "" {
			return n.Role, e
		}
	}
	if e, ok := s.store.entry(TagDefault); ok {
		return TagDefault, e
	}
	return "", nil
}

// lookupAsked is the entry stored under the name, MAC or NID asked for.
func (s *Service) lookupAsked(r *ScriptRequest) (string, *Entry) {
	if r.Name != "" {
		if e, ok := s.store.entry(r.Name); ok {
			return r.Name, e
		}
	}
	if r.MAC != "" {
		if k := normMAC(r.MAC); k != "" {
			if e, ok := s.store.entry(k); ok {
				return k, e
			}
		}
	}
	if r.HasNID {
		if e, ok := s.store.entry(nidKey(int32(r.NID))); ok {
			return nidKey(int32(r.NID)), e
		}
	}
	return "", nil
}

// Bootscript returns the iPXE script for r: the node's own kernel, initrd
// and parameters; for an unknown node first a chain back that adds its
// architecture, then the Unknown-<arch> entry.
func (s *Service) Bootscript(r *ScriptRequest) (string, error) {
	n := s.node(r)
	if n != nil && n.EndpointEnabled() {
		if _, e := s.lookup(n, r); e != nil && e.Kernel != "" {
			s.hist.touch(n.ID, EndpointBootscript, s.now())
			s.m.known.Inc()
			return s.knownScript(n, r, e), nil
		}
	}
	if n == nil && r.MAC != "" {
		s.missed(normMAC(r.MAC))
	}
	if r.Arch == "" {
		s.m.chain.Inc()
		return "#!ipxe\nsleep " + seconds(s.cfg.RetrievalDelay) + "\n" + s.unknownChain(r) + "\n\n", nil
	}
	if e, ok := s.store.entry(TagUnknownPrefix + r.Arch); ok && e.Kernel != "" {
		s.m.unknown.Inc()
		return s.script(e, "", nil, "", s.unknownChain(r)), nil
	}
	desc := "Unknown " + r.describe(n) + " architecture " + r.Arch
	if n != nil {
		if _, e := s.lookup(n, r); e != nil && e.Kernel != "" {
			s.hist.touch(n.ID, EndpointBootscript, s.now())
			s.m.known.Inc()
			return s.knownScript(n, r, e), nil
		}
	}
	s.m.notConfigured.Inc()
	return "", problem.NotFoundf("%s: this host not configured for booting.", desc)
}

func seconds(d interface{ Seconds() float64 }) string {
	return strconv.FormatInt(int64(d.Seconds()), 10)
}

// knownScript is the script of a node HSM knows.
func (s *Service) knownScript(n *Node, r *ScriptRequest, e *Entry) string {
	var b strings.Builder
	b.WriteString("chain ")
	b.WriteString(s.cfg.AdvertiseURL)
	b.WriteString("/boot/v1/bootscript?")
	mac := r.MAC
	if mac == "" && len(n.MACs) > 0 {
		mac = n.MACs[0]
	}
	if mac != "" {
		b.WriteString("mac=")
		b.WriteString(queryValue(mac))
	} else {
		b.WriteString("name=")
		b.WriteString(url.QueryEscape(n.ID))
	}
	b.WriteString("&retry=")
	b.WriteString(strconv.Itoa(r.Retry + 1))
	return s.script(e, e.Token, n, s.nodeToken(n, r.Caller), b.String())
}

// unknownChain is the chain line that brings an unknown node back with its
// architecture.
func (s *Service) unknownChain(r *ScriptRequest) string {
	var q string
	switch {
	case r.MAC != "":
		q = "mac=" + queryValue(r.MAC)
	case r.Name != "":
		q = "name=" + url.QueryEscape(r.Name)
	case r.HasNID:
		q = "nid=" + strconv.Itoa(r.NID)
	default:
		q = "mac=${net/net0}"
	}
	ts := r.TS
	if ts == "" {
		ts = strconv.FormatInt(s.now().Unix(), 10)
	}
	return "chain " + s.cfg.AdvertiseURL + "/boot/v1/bootscript?" + q + "&arch=${buildarch}&ts=" + url.QueryEscape(ts)
}

// DiscoveryParam carries the discovery token on the discovery image's
// kernel command line (ScriptConfig.DiscoveryToken).
const DiscoveryParam = "hms_discovery_token"

// minDiscoveryToken is the shortest discovery token taken, as reds takes.
const minDiscoveryToken = 16

// script writes the hms-bss script shape for entry e; n nil means an
// unknown node (no xname= or nid= injected; the discovery token, if any);
// nodeTok, when set, goes on the command line as CmdlineParam.
func (s *Service) script(e *Entry, token string, n *Node, nodeTok, chain string) string {
	params := s.params(e, token, n, nodeTok)
	var b strings.Builder
	b.Grow(256 + len(params) + len(e.Kernel) + len(e.Initrd) + len(chain))
	b.WriteString("#!ipxe\nkernel --name kernel ")
	b.WriteString(e.Kernel)
	if params != "" {
		b.WriteByte(' ')
		b.WriteString(params)
	}
	b.WriteString(" || goto boot_retry\n")
	if e.Initrd != "" {
		b.WriteString("initrd --name initrd ")
		b.WriteString(e.Initrd)
		b.WriteString(" || goto boot_retry\nimgstat || echo Could not show image information.\n")
	}
	b.WriteString("boot || goto boot_retry\n:boot_retry\nsleep ")
	b.WriteString(seconds(s.cfg.RetryDelay))
	b.WriteByte('\n')
	b.WriteString(chain)
	b.WriteString("\n\n")
	return b.String()
}

// params is the kernel command line: the entry's parameters, then its
// kernel's and initrd's; with an initrd, "initrd=initrd" first and the
// first other initrd token cut (as hms-bss does); then xname=, nid=,
// bss_referral_token=, ds=, the node token and (unknown nodes) the
// discovery token, each unless already present.
func (s *Service) params(e *Entry, token string, n *Node, nodeTok string) string {
	p := s.baseParams(e)
	// One buffer for the additions (a string each cost four allocations
	// per script); b.String() does not copy, so each check reads it.
	var b strings.Builder
	b.Grow(len(p) + 160 + len(s.cfg.AdvertiseURL) + len(nodeTok))
	b.WriteString(p)
	add := func(prefix string, value ...string) {
		if hasParam(b.String(), prefix) {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(prefix)
		for _, v := range value {
			b.WriteString(v)
		}
	}
	if n != nil {
		add("xname=", n.ID)
		if n.NID != nil {
			add("nid=", strconv.Itoa(*n.NID))
		}
	}
	if token != "" {
		add("bss_referral_token=", token)
	}
	add("ds=", "nocloud-net;s=", s.cfg.AdvertiseURL, "/")
	if nodeTok != "" {
		add(CmdlineParam+"=", nodeTok)
	}
	if n == nil && s.cfg.DiscoveryToken != "" {
		add(DiscoveryParam+"=", s.cfg.DiscoveryToken)
	}
	return b.String()
}

// baseParams is the entry's command line before the additions of params.
func (s *Service) baseParams(e *Entry) string {
	parts := make([]string, 0, 3)
	if e.Params != "" {
		parts = append(parts, e.Params)
	}
	if im, ok := s.store.image(kindKernel, e.Kernel); ok && im.Params != "" {
		parts = append(parts, im.Params)
	}
	if im, ok := s.store.image(kindInitrd, e.Initrd); ok && im.Params != "" && e.Initrd != "" {
		parts = append(parts, im.Params)
	}
	p := strings.Join(parts, " ")
	if e.Initrd != "" {
		if i := strings.Index(p, "initrd"); i >= 0 {
			end := strings.IndexByte(p[i:], ' ')
			if end < 0 {
				p = p[:i]
			} else {
				p = p[:i] + p[i+end:]
			}
		}
		p = strings.TrimSpace("initrd=initrd " + p)
	}
	return p
}

// hasParam reports whether a token of p starts with prefix.
func hasParam(p, prefix string) bool {
	for i := 0; i < len(p); {
		j := strings.Index(p[i:], prefix)
		if j < 0 {
			break
		}
		if at := i + j; at == 0 || isSpace(p[at-1]) {
			return true
		}
		i += j + 1
	}
	return false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// queryValue is v as it may stand in a chain URL of a script: as asked when it
// is made of MAC characters only, escaped otherwise, so a crafted mac= can never
// add lines (commands) to the script.
func queryValue(v string) string {
	for _, c := range v {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == ':' || c == '-' || c == '.') {
			return url.QueryEscape(v)
		}
	}
	return v
}
