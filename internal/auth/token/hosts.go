package token

import (
	"net"
	"net/url"
	"strings"
)

// Hosts are the hosts a token that third parties could otherwise collect
// (the scn token on SCN callbacks and deliveries) may be sent to: loopback
// always, plus the listed host names or addresses (case-insensitive, no
// port). A subscriber chooses its own callback URL, so a node that
// subscribes must not receive a token that lets it post forged SCNs to
// bss or hmnfd.
type Hosts []string

// Allows reports whether host (a host name or address, without port) may
// receive the token.
func (h Hosts) Allows(host string) bool {
	if host == "localhost" {
		return true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, a := range h {
		if strings.EqualFold(a, host) {
			return true
		}
	}
	return false
}

// AllowsURL reports whether the host of raw may receive the token.
func (h Hosts) AllowsURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && h.Allows(u.Hostname())
}

// AllowsAddr reports whether the host of addr (host:port) may receive the
// token.
func (h Hosts) AllowsAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && h.Allows(host)
}
