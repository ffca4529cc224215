package ipxe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"gopkg.in/yaml.v2"

	"github.com/hmsuite/hms/internal/problem"
)

// callerIP is the address a cloud-init request comes from, which decides
// whose meta-data (secrets included) it gets: the peer address, unless the
// peer is one of the trusted proxies. Then it is the X-Forwarded-For element
// nearest BSS that is not itself a trusted proxy (every proxy appends the
// address it was reached from, so elements further left are whatever the
// client claimed), or the leftmost when all are trusted. hms-bss took the
// last element from anyone, so any host could read any node's meta-data by
// naming the node's address; see docs/security.md.
func callerIP(r *http.Request, trusted []netip.Prefix) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	peer = peer.Unmap()
	if !inPrefixes(peer, trusted) {
		return peer, true
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		h := strings.TrimSpace(hops[i])
		if h == "" {
			continue
		}
		a, err := netip.ParseAddr(h)
		if err != nil {
			return netip.Addr{}, false
		}
		if peer = a.Unmap(); !inPrefixes(peer, trusted) {
			break
		}
	}
	return peer, true
}

func inPrefixes(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// caller maps a cloud-init caller to its HSM node; a miss is looked up in
// HSM once before the caller is treated as unknown (a node's address may be
// newer than the cache: DHCP just gave it).
func (s *Service) caller(ctx context.Context, r *http.Request) *Node {
	n, _ := s.callerNode(ctx, r)
	return n
}

// callerNode is caller, also returning the caller's address.
func (s *Service) callerNode(ctx context.Context, r *http.Request) (*Node, netip.Addr) {
	ip, ok := callerIP(r, s.trusted)
	if !ok {
		return nil, netip.Addr{}
	}
	if n, ok := s.cache.ByIP(ip); ok {
		return n, ip
	}
	s.lookupIP(ctx, ip)
	n, _ := s.cache.ByIP(ip)
	return n, ip
}

// metaData is the merged meta-data of node n (nil: an unknown caller): its
// SubRole entry's, overlaid by its boot entry's, plus the generated keys
// and Global, as hms-bss builds it.
func (s *Service) metaData(n *Node) map[string]any {
	out := map[string]any{}
	if n == nil {
		if e, ok := s.store.entry(TagDefault); ok {
			overlay(out, e.CloudInit.MetaData)
		}
		out["instance-id"] = "default-" + randomHex()
	} else {
		if e, ok := s.store.entry(n.SubRole); ok && n.SubRole != "" {
			overlay(out, e.CloudInit.MetaData)
		}
		if _, e := s.lookup(n, &ScriptRequest{Name: n.ID}); e != nil {
			overlay(out, e.CloudInit.MetaData)
		}
		out["instance-id"] = n.ID + "-" + randomHex()
		if _, ok := out["local-hostname"]; !ok {
			out["local-hostname"] = n.ID
		}
		out["shasta-type"] = n.Role
		out["shasta-role"] = n.SubRole
	}
	out["Global"] = s.globalMetaData()
	return out
}

func (s *Service) globalMetaData() map[string]any {
	if e, ok := s.store.entry(TagGlobal); ok && e.CloudInit.MetaData != nil {
		return cloneObject(e.CloudInit.MetaData)
	}
	return map[string]any{}
}

func overlay(dst, src map[string]any) {
	for k, v := range cloneObject(src) {
		dst[k] = v
	}
}

func randomHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// MetaData answers GET /meta-data for node n (nil: unknown) asking from
// caller; key, if not empty, selects a value by its dotted path (Global.x.y
// from Global alone). With node tokens on, a node's own token is under
// MetaDataKey.
func (s *Service) MetaData(n *Node, caller netip.Addr, key string) (any, error) {
	var root any
	if key == TagGlobal || strings.HasPrefix(key, TagGlobal+".") {
		root = map[string]any{TagGlobal: s.globalMetaData()}
	} else {
		md := s.metaData(n)
		if tok := s.nodeToken(n, caller); tok != "" {
			md[MetaDataKey] = tok
		}
		if key == "" {
			return md, nil
		}
		root = md
	}
	for _, part := range strings.Split(key, ".") {
		m, ok := root.(map[string]any)
		if !ok {
			return nil, problem.NotFoundf("Not Found")
		}
		if root, ok = m[part]; !ok {
			return nil, problem.NotFoundf("Not Found")
		}
	}
	return root, nil
}

// UserData answers GET /user-data: the #cloud-config document of node n
// (nil: unknown, which gets Default's).
func (s *Service) UserData(n *Node) (string, error) {
	out := map[string]any{}
	if n == nil {
		if e, ok := s.store.entry(TagDefault); ok {
			overlay(out, e.CloudInit.UserData)
		}
	} else {
		if e, ok := s.store.entry(n.SubRole); ok && n.SubRole != "" {
			overlay(out, e.CloudInit.UserData)
		}
		if _, e := s.lookup(n, &ScriptRequest{Name: n.ID}); e != nil {
			overlay(out, e.CloudInit.UserData)
		}
		out["local-hostname"] = s.metaData(n)["local-hostname"]
		s.hist.touch(n.ID, EndpointUserData, s.now())
	}
	b, err := yaml.Marshal(out)
	if err != nil {
		return "", problem.Invalidf("Invalid YAML")
	}
	doc := "#cloud-config\n" + string(b)
	if !strings.HasSuffix(doc, "\n") {
		doc += "\n"
	}
	return doc, nil
}

// PhoneHome stores what node n posted to /phone-home in its own entry and
// returns the entry's cloud-init data.
func (s *Service) PhoneHome(ctx context.Context, n *Node, ph PhoneHome) (BootParams, error) {
	if n == nil {
		return BootParams{}, problem.NotFoundf("XName not found for IP")
	}
	s.store.wmu.Lock()
	defer s.store.wmu.Unlock()
	old, ok := s.store.entry(n.ID)
	if !ok {
		return BootParams{}, notFoundKey(n.ID)
	}
	e := *old
	e.CloudInit = cloneCloudInit(old.CloudInit)
	e.CloudInit.PhoneHome = ph
	ch := newChange()
	ch.put[n.ID] = &e
	if err := s.store.apply(ctx, ch); err != nil {
		return BootParams{}, err
	}
	return BootParams{Hosts: []string{n.ID}, CloudInit: cloneCloudInit(e.CloudInit)}, nil
}
