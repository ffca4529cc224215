package ipxe

import (
	"net/http"
	"net/netip"
	"slices"
	"time"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
)

// NodeTokens mints the tokens bss hands to booting nodes (bss
// -node-token-key): sub the node's xname, role node, iss auth.NodeIssuer.
// The suite's daemons verify them with -node-jwt-keys (the key's JWKS,
// served on /boot/v1/node-jwks), and grant them the node role only.
type NodeTokens struct {
	Signer *auth.Signer
	// TTL is how long a token is valid (DefaultNodeTokenTTL when 0).
	TTL time.Duration
}

// DefaultNodeTokenTTL is how long a node token is valid: long enough for
// a boot, short enough that a leaked token soon stops working; a running
// node renews it (hbagent -bss-url) before it expires.
const DefaultNodeTokenTTL = 24 * time.Hour

// CmdlineParam and MetaDataKey carry a node's token: on the kernel command
// line of its boot script, and in its cloud-init meta-data.
const (
	CmdlineParam = token.CmdlineParam
	MetaDataKey  = "hms-node-token"
)

// nodeToken is a fresh token for node n when caller, the address the
// request comes from, is one of n's own (HSM's EthernetInterfaces): iPXE
// and cloud-init send no token, so the address is all that tells the node
// from anyone else, as it already decides whose cloud-init data a caller
// gets. "" when tokens are off, the caller is not n, or signing fails.
func (s *Service) nodeToken(n *Node, caller netip.Addr) string {
	if s.tokens == nil || n == nil || !caller.IsValid() || !slices.Contains(n.IPs, caller.Unmap()) {
		return ""
	}
	tok, _, err := s.mintNodeToken(n.ID)
	if err != nil {
		s.log.Warn("node_token_failed", "xname", n.ID, "err", err)
		return ""
	}
	return tok
}

// mintNodeToken returns a token for the node x and how long it is valid.
func (s *Service) mintNodeToken(x string) (string, time.Duration, error) {
	ttl := s.tokens.TTL
	if ttl <= 0 {
		ttl = DefaultNodeTokenTTL
	}
	tok, _, err := s.tokens.Signer.NodeToken(x, ttl)
	if err == nil {
		s.m.nodeTokens.Inc()
	}
	return tok, ttl, err
}

// TokenResponse is the answer of GET /boot/v1/node-token, in OAuth 2.0's
// token response shape (RFC 6749 section 5.1).
type TokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
}

// nodeTokenRoute answers GET /boot/v1/node-token?name=<xname>: a fresh
// token for the node (a node renewing its own with its current token, or
// an admin provisioning one). Not in hms-bss.
func (a *API) nodeTokenRoute(w http.ResponseWriter, r *http.Request) {
	if a.svc.tokens == nil {
		a.fail(w, r, problem.NotFoundf("node tokens are off (bss -node-token-key)"))
		return
	}
	x := r.URL.Query().Get("name")
	if !xname.IsNode(x) {
		a.fail(w, r, problem.Invalidf("name=%q: want a node xname", x))
		return
	}
	x = xname.Normalize(x)
	// Anyone but an admin renews only from the node's own address, as at
	// boot: a leaked token used elsewhere, or the token of a node HSM no
	// longer has, is not renewed and stops working at its expiry.
	if p, ok := auth.FromContext(r.Context()); !ok || !p.Has(auth.Admin) {
		if n, _ := a.svc.callerNode(r.Context(), r); n == nil || n.ID != x {
			problem.WriteStatus(w, r, http.StatusForbidden, "a node token is renewed only from an address HSM gives node "+x)
			return
		}
	}
	tok, ttl, err := a.svc.mintNodeToken(x)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, jsonType, TokenResponse{AccessToken: tok, TokenType: "Bearer",
		ExpiresIn: int64(ttl.Seconds())})
}

// nodeJWKS answers GET /boot/v1/node-jwks: the public key of the node
// tokens, for the daemons' -node-jwt-keys.
func (a *API) nodeJWKS(w http.ResponseWriter, r *http.Request) {
	if a.svc.tokens == nil {
		a.fail(w, r, problem.NotFoundf("node tokens are off (bss -node-token-key)"))
		return
	}
	w.Header().Set("Content-Type", "application/jwk-set+json")
	_, _ = w.Write(a.svc.tokens.Signer.JWKS())
}
