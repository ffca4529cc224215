package ipxe

import (
	"bytes"
	"net/netip"
	"net/url"
	"strconv"

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
// The store is read under one lock: a boot script costs one lookup, not
// one per key tried.
func (s *Service) lookup(n *Node, r *ScriptRequest) (string, *Entry) {
	st := s.store
	st.mu.RLock()
	defer st.mu.RUnlock()
	if k, e := st.lookupAskedLocked(r); e != nil {
		return k, e
	}
	if n != nil {
		if e, ok := st.entries[n.ID]; ok {
			return n.ID, e
		}
		for _, m := range n.MACs {
			if e, ok := st.entries[m]; ok {
				return m, e
			}
		}
		if n.NID != nil {
			if e := st.nidEntryLocked(int32(*n.NID)); e != nil {
				return nidKey(int32(*n.NID)), e
			}
		}
		if e, ok := st.entries[n.Role]; ok && n.Role != "" {
			return n.Role, e
		}
	}
	if e, ok := st.entries[TagDefault]; ok {
		return TagDefault, e
	}
	return "", nil
}

// lookupAskedLocked is the entry stored under the name, MAC or NID asked
// for; s.mu is held.
func (s *Store) lookupAskedLocked(r *ScriptRequest) (string, *Entry) {
	if r.Name != "" {
		if e, ok := s.entries[r.Name]; ok {
			return r.Name, e
		}
	}
	if r.MAC != "" {
		if k := normMAC(r.MAC); k != "" {
			if e, ok := s.entries[k]; ok {
				return k, e
			}
		}
	}
	if r.HasNID {
		if e := s.nidEntryLocked(int32(r.NID)); e != nil {
			return nidKey(int32(r.NID)), e
		}
	}
	return "", nil
}

// nidEntryLocked is the entry stored under nidKey(n), looked up without
// making the key a string; s.mu is held.
func (s *Store) nidEntryLocked(n int32) *Entry {
	var buf [16]byte
	k := strconv.AppendInt(append(buf[:0], "nid"...), int64(n), 10)
	return s.entries[string(k)]
}

// Bootscript returns the iPXE script for r (AppendBootscript).
func (s *Service) Bootscript(r *ScriptRequest) (string, error) {
	b, err := s.AppendBootscript(nil, r)
	return string(b), err
}

// AppendBootscript appends to dst the iPXE script for r: the node's own
// kernel, initrd and parameters; for an unknown node first a chain back
// that adds its architecture, then the Unknown-<arch> entry. The API
// renders into a pooled buffer, so a script costs no allocation of its own.
func (s *Service) AppendBootscript(dst []byte, r *ScriptRequest) ([]byte, error) {
	n := s.node(r)
	if n != nil && n.EndpointEnabled() {
		if _, e := s.lookup(n, r); e != nil && e.Kernel != "" {
			s.hist.touch(n.ID, EndpointBootscript, s.now())
			s.m.known.Inc()
			return s.appendKnownScript(dst, n, r, e), nil
		}
	}
	if n == nil && r.MAC != "" {
		s.missed(normMAC(r.MAC))
	}
	if r.Arch == "" {
		s.m.chain.Inc()
		dst = append(dst, "#!ipxe\nsleep "...)
		dst = strconv.AppendInt(dst, int64(s.cfg.RetrievalDelay.Seconds()), 10)
		dst = append(dst, '\n')
		dst = append(dst, s.unknownChain(r)...)
		return append(dst, "\n\n"...), nil
	}
	if e, ok := s.store.entry(TagUnknownPrefix + r.Arch); ok && e.Kernel != "" {
		s.m.unknown.Inc()
		dst = s.appendScript(dst, e, "", nil, "")
		dst = append(dst, s.unknownChain(r)...)
		return append(dst, "\n\n"...), nil
	}
	desc := "Unknown " + r.describe(n) + " architecture " + r.Arch
	if n != nil {
		if _, e := s.lookup(n, r); e != nil && e.Kernel != "" {
			s.hist.touch(n.ID, EndpointBootscript, s.now())
			s.m.known.Inc()
			return s.appendKnownScript(dst, n, r, e), nil
		}
	}
	s.m.notConfigured.Inc()
	return dst, problem.NotFoundf("%s: this host not configured for booting.", desc)
}

// appendKnownScript appends the script of a node HSM knows.
func (s *Service) appendKnownScript(dst []byte, n *Node, r *ScriptRequest, e *Entry) []byte {
	dst = s.appendScript(dst, e, e.Token, n, s.nodeToken(n, r.Caller))
	dst = append(dst, "chain "...)
	dst = append(dst, s.cfg.AdvertiseURL...)
	dst = append(dst, "/boot/v1/bootscript?"...)
	mac := r.MAC
	if mac == "" && len(n.MACs) > 0 {
		mac = n.MACs[0]
	}
	if mac != "" {
		dst = append(dst, "mac="...)
		dst = append(dst, queryValue(mac)...)
	} else {
		dst = append(dst, "name="...)
		dst = append(dst, url.QueryEscape(n.ID)...)
	}
	dst = append(dst, "&retry="...)
	dst = strconv.AppendInt(dst, int64(r.Retry)+1, 10)
	return append(dst, "\n\n"...)
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

// appendScript appends the hms-bss script shape for entry e up to its
// chain line, which the caller appends, followed by "\n\n"; n nil means an
// unknown node (no xname= or nid= injected; the discovery token, if any);
// nodeTok, when set, goes on the command line as CmdlineParam.
func (s *Service) appendScript(dst []byte, e *Entry, token string, n *Node, nodeTok string) []byte {
	dst = append(dst, "#!ipxe\nkernel --name kernel "...)
	dst = append(dst, e.Kernel...)
	dst = append(dst, ' ')
	mark := len(dst)
	dst = s.appendParams(dst, e, token, n, nodeTok)
	if len(dst) == mark {
		dst = dst[:mark-1] // no parameters, no space
	}
	dst = append(dst, " || goto boot_retry\n"...)
	if e.Initrd != "" {
		dst = append(dst, "initrd --name initrd "...)
		dst = append(dst, e.Initrd...)
		dst = append(dst, " || goto boot_retry\nimgstat || echo Could not show image information.\n"...)
	}
	dst = append(dst, "boot || goto boot_retry\n:boot_retry\nsleep "...)
	dst = strconv.AppendInt(dst, int64(s.cfg.RetryDelay.Seconds()), 10)
	return append(dst, '\n')
}

// appendParams appends the kernel command line: the entry's parameters,
// then its kernel's and initrd's; with an initrd, "initrd=initrd" first and
// the first other initrd token cut (as hms-bss does); then xname=, nid=,
// bss_referral_token=, ds=, the node token and (unknown nodes) the
// discovery token, each unless already present.
func (s *Service) appendParams(dst []byte, e *Entry, token string, n *Node, nodeTok string) []byte {
	start := len(dst)
	dst = s.appendBaseParams(dst, e)
	// param appends prefix, unless a parameter already starts with it;
	// the caller appends the value when it did.
	param := func(prefix string) bool {
		if hasParam(dst[start:], prefix) {
			return false
		}
		if len(dst) > start {
			dst = append(dst, ' ')
		}
		dst = append(dst, prefix...)
		return true
	}
	if n != nil {
		if param("xname=") {
			dst = append(dst, n.ID...)
		}
		if n.NID != nil && param("nid=") {
			dst = strconv.AppendInt(dst, int64(*n.NID), 10)
		}
	}
	if token != "" && param("bss_referral_token=") {
		dst = append(dst, token...)
	}
	if param("ds=") {
		dst = append(append(append(dst, "nocloud-net;s="...), s.cfg.AdvertiseURL...), '/')
	}
	if nodeTok != "" && param(CmdlineParam+"=") {
		dst = append(dst, nodeTok...)
	}
	if n == nil && s.cfg.DiscoveryToken != "" && param(DiscoveryParam+"=") {
		dst = append(dst, s.cfg.DiscoveryToken...)
	}
	return dst
}

// appendBaseParams appends the entry's command line before the additions
// of appendParams.
func (s *Service) appendBaseParams(dst []byte, e *Entry) []byte {
	var kernel, initrd string
	if im, ok := s.store.image(kindKernel, e.Kernel); ok {
		kernel = im.Params
	}
	if im, ok := s.store.image(kindInitrd, e.Initrd); ok && e.Initrd != "" {
		initrd = im.Params
	}
	if e.Initrd != "" {
		dst = append(dst, "initrd=initrd "...)
	}
	start := len(dst)
	for _, p := range [...]string{e.Params, kernel, initrd} {
		if p == "" {
			continue
		}
		if len(dst) > start {
			dst = append(dst, ' ')
		}
		dst = append(dst, p...)
	}
	if e.Initrd == "" {
		return dst
	}
	// The first "initrd" (anywhere, as hms-bss cuts it) up to the next
	// space goes; the space stays.
	if i := bytes.Index(dst[start:], []byte("initrd")); i >= 0 {
		i += start
		if end := bytes.IndexByte(dst[i:], ' '); end < 0 {
			dst = dst[:i]
		} else {
			dst = append(dst[:i], dst[i+end:]...)
		}
	}
	// "initrd=initrd " + the rest, space-trimmed (its start is not space).
	return dst[:start-len("initrd=initrd ")+len(bytes.TrimSpace(dst[start-len("initrd=initrd "):]))]
}

// hasParam reports whether a token of p starts with prefix.
func hasParam[T string | []byte](p T, prefix string) bool {
	for i := 0; i < len(p) && i+len(prefix) <= len(p); i++ {
		if i > 0 && !isSpace(p[i-1]) {
			continue
		}
		j := 0
		for j < len(prefix) && p[i+j] == prefix[j] {
			j++
		}
		if j == len(prefix) {
			return true
		}
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
