package discovery

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http/httptrace"
	"sync"
)

// TLS key pinning. A River BMC is placed by the switch port its MAC is
// on, so a device spoofing a registered BMC's MAC while the switch's
// forwarding table still shows the real port would be logged in to with
// the BMC's stored password (and the factory one). The key the BMC
// presents is pinned when it is first registered (Endpoint.Key, the
// SHA-256 of its certificate's SubjectPublicKeyInfo; a BMC registered
// before, by its next presence check), and every request of
// a later attempt goes out only on a connection presenting that key: the
// check runs when the connection is handed to the request (new or kept
// alive), before a byte of the request, and so a credential, is written.

// errKeyChanged marks a BMC that presented a TLS key other than the one
// pinned at its registration: no request was sent to it.
var errKeyChanged = errors.New("TLS key is not the one pinned at its registration")

// keyPin checks the TLS key of the connections of one attempt.
type keyPin struct {
	mu sync.Mutex
	// want is the pinned key; empty, the first key seen is pinned for the
	// rest of the attempt (and stored by its registration).
	want string
	// got is a key refused ("none": no TLS), if any.
	got string
}

// pinned returns ctx carrying p's check: every request made with it goes
// out only on a connection presenting p's key.
func (p *keyPin) pinned(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: p.gotConn})
}

// expect sets the pinned key (none: the first seen is).
func (p *keyPin) expect(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.want = key
}

// key is the key pinned, or seen first.
func (p *keyPin) key() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.want
}

// gotConn closes a connection presenting another key before the request
// is written on it: the request fails (a kept-alive one may be tried again
// on a new connection, which is checked the same way).
func (p *keyPin) gotConn(info httptrace.GotConnInfo) {
	key := "none"
	if tc, ok := info.Conn.(*tls.Conn); ok {
		if k := connKey(tc.ConnectionState()); k != "" {
			key = k
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.want == "" && key != "none":
		p.want = key
		return
	case key == p.want:
		return
	}
	p.got = key
	_ = info.Conn.Close()
}

// refused returns the error of a BMC at addr that presented another key,
// nil if none did.
func (p *keyPin) refused(addr string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.got == "" {
		return nil
	}
	return fmt.Errorf("bmc %s presents TLS key sha256:%s, not sha256:%s: %w; no credentials sent (DELETE /v1/endpoints/{xname}/tls-key if the BMC's key really changed)",
		addr, p.got, p.want, errKeyChanged)
}

// pinAtPresence pins key, which the BMC of e presented at the address it
// is registered at, when e has no pin: a BMC registered before reds pinned
// keys (or whose pin an admin cleared) is pinned by the first presence
// round, rather than by its next registration, which a device spoofing
// its MAC may be the one to cause.
func (s *Service) pinAtPresence(ctx context.Context, e Endpoint, key string) {
	if e.Key != "" || key == "" || e.State != StateRegistered && e.State != StateMissing {
		return
	}
	ok, err := s.cfg.Store.PinKey(ctx, e.Xname, key)
	switch {
	case err != nil:
		s.pollFailed(ctx, "store", err)
	case ok:
		s.log.Info("bmc_tls_key_pinned", "xname", e.Xname, "addr", e.Addr, "key", "sha256:"+key)
	}
}

// connKey is the pin of the key a TLS connection's peer presented: the hex
// SHA-256 of its certificate's SubjectPublicKeyInfo ("" without one).
func connKey(cs tls.ConnectionState) string {
	if len(cs.PeerCertificates) == 0 {
		return ""
	}
	sum := sha256.Sum256(cs.PeerCertificates[0].RawSubjectPublicKeyInfo)
	return hex.EncodeToString(sum[:])
}
