package sim

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/internal/auth/token"
)

type sourceKey struct{}

// withSource has the nodes' client connect from addr (invalid: the
// system's choice).
func withSource(ctx context.Context, addr netip.Addr) context.Context {
	return context.WithValue(ctx, sourceKey{}, addr)
}

// newNodeClient is the nodes' client: a new connection per request (a
// pooled one could come from another node's address), from the address
// withSource put in the request's context.
func newNodeClient() *http.Client {
	tr := &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var d net.Dialer
			if a, ok := ctx.Value(sourceKey{}).(netip.Addr); ok && a.IsValid() {
				d.LocalAddr = net.TCPAddrFromAddrPort(netip.AddrPortFrom(a, 0))
			}
			return d.DialContext(ctx, network, addr)
		}}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// scriptToken is the node token on a boot script's kernel command line.
func scriptToken(script string) string {
	if m := tokenParam.FindStringSubmatch(script); m != nil {
		return m[1]
	}
	return ""
}

// nodeClient is the hbtd client of node x: with its node token tok (renewed
// at bss, as hbagent -bss-url does) when bss gave one. Its requests,
// renewals included, come from the node's lease address from: bss renews a
// node token only for a caller at one of the node's own addresses.
func (s *Sim) nodeClient(x, tok string, from netip.Addr) *agent.Client {
	if tok == "" {
		return s.hbtd
	}
	tc := token.Config{Token: tok, RenewURL: s.cfg.BSSURL + "/boot/v1/node-token?name=" + url.QueryEscape(x)}
	return agent.NewClient(s.cfg.HBTDURL, tc.Client(sourceClient(from)))
}

// sourceClient is a client whose connections come from addr.
func sourceClient(addr netip.Addr) *http.Client {
	d := &net.Dialer{LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(addr, 0))}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 1}, Timeout: 10 * time.Second}
}
