package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/hmsuite/hms/internal/xname"
)

// algorithms are the signatures accepted: asymmetric only, so a token signed
// with HS256 and a public key as its secret (the classic confusion) or with
// alg "none" fails to parse before any key is looked at.
var algorithms = []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.EdDSA}

// DefaultSkew is the clock difference tolerated on exp, nbf and iat.
const DefaultSkew = 30 * time.Second

// Verifier checks Bearer tokens and returns the caller they name.
type Verifier struct {
	keys     *keySet // nil: only node tokens are accepted
	node     *keySet // the node-token keys (nil: none)
	issuer   string
	audience string
	claims   [][]string // paths of the roles claims
	skew     time.Duration
	now      func() time.Time
	cache    *tokenCache // the tokens accepted (nil: none kept)
}

// NewVerifier returns the verifier cfg describes, or nil when cfg names no
// key source (auth off). A key file is read now; a JWKS URL is fetched at the
// first token. hc fetches the JWKS (nil: a client with a 10 s timeout); now
// is the clock (nil: time.Now).
func NewVerifier(cfg Config, hc *http.Client, now func() time.Time) (*Verifier, error) {
	if now == nil {
		now = time.Now
	}
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	if !cfg.On() {
		return nil, nil
	}
	skew := cfg.Skew
	if skew <= 0 {
		skew = DefaultSkew
	}
	v := &Verifier{issuer: cfg.Issuer, audience: cfg.Audience, skew: skew, now: now,
		cache: newTokenCache(DefaultCacheSize, now)}
	var err error
	switch {
	case cfg.JWKSURL != "":
		v.keys = &keySet{url: cfg.JWKSURL, hc: hc, now: now}
	case cfg.KeyFile != "":
		if v.keys, err = staticKeys(cfg.KeyFile, hc, now); err != nil {
			return nil, err
		}
	}
	if cfg.NodeKeys != "" {
		if isURL(cfg.NodeKeys) {
			v.node = &keySet{url: cfg.NodeKeys, hc: hc, now: now}
		} else if v.node, err = staticKeys(cfg.NodeKeys, hc, now); err != nil {
			return nil, err
		}
	}
	for _, c := range cfg.RolesClaims {
		v.claims = append(v.claims, strings.Split(c, "."))
	}
	if len(v.claims) == 0 {
		v.claims = [][]string{{"roles"}}
	}
	return v, nil
}

// Verify checks raw (the token without "Bearer ") and returns its caller.
// Every failure wraps ErrUnauthenticated. A token verified before is found
// in the cache (by its SHA-256) until its exp or a change of its keys;
// the Roles of the Principal returned are shared: do not change them.
func (v *Verifier) Verify(ctx context.Context, raw string) (Principal, error) {
	if v.cache == nil {
		p, _, err := v.verify(ctx, raw)
		return p, err
	}
	// Hashed in place: []byte(raw) would copy the token to the heap, the
	// only allocation of a cached token. Sum256 only reads it.
	sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(raw), len(raw)))
	if p, ok := v.cache.get(&sum); ok {
		return p, nil
	}
	p, e, err := v.verify(ctx, raw)
	if err != nil {
		return Principal{}, err
	}
	v.cache.put(&sum, p, e.exp, e.ks, e.gen)
	return p, nil
}

// verified is what the cache needs of a token verify accepted: its exp and
// the keys (and their generation) that verified it.
type verified struct {
	exp time.Time
	ks  *keySet
	gen uint64
}

// verify checks raw in full: its signature, claims and roles.
func (v *Verifier) verify(ctx context.Context, raw string) (Principal, verified, error) {
	p, e, err := v.check(ctx, raw)
	if err != nil {
		return Principal{}, verified{}, fmt.Errorf("%w: %w", ErrUnauthenticated, err)
	}
	return p, e, nil
}

// check is verify without the ErrUnauthenticated its errors get.
func (v *Verifier) check(ctx context.Context, raw string) (Principal, verified, error) {
	tok, err := jwt.ParseSigned(raw, algorithms)
	if err != nil {
		return Principal{}, verified{}, err
	}
	if len(tok.Headers) != 1 {
		return Principal{}, verified{}, errors.New("want one signature")
	}
	// The unverified iss only picks the key set: a node token is checked
	// against the node-token keys, every other token against the site's.
	var claimed jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&claimed); err != nil {
		return Principal{}, verified{}, err
	}
	ks, isNode := v.keys, v.node != nil && claimed.Issuer == NodeIssuer
	if isNode {
		ks = v.node
	}
	if ks == nil {
		return Principal{}, verified{}, fmt.Errorf("no keys for tokens of issuer %q", claimed.Issuer)
	}
	h := tok.Headers[0]
	key, gen, err := ks.key(ctx, h.KeyID, h.Algorithm)
	if err != nil {
		return Principal{}, verified{}, err
	}
	var std jwt.Claims
	var all map[string]any
	if err := tok.Claims(key, &std, &all); err != nil {
		return Principal{}, verified{}, err
	}
	if err := v.validate(std, isNode); err != nil {
		return Principal{}, verified{}, err
	}
	// Clipped: a caller appending to the Roles of a cached Principal gets
	// its own copy.
	p := Principal{Subject: std.Subject, Roles: slices.Clip(v.roles(all))}
	if isNode {
		// The node-token keys grant the node role and nothing else,
		// whatever roles the token claims: bss's key cannot mint an admin.
		p.Roles = []Role{Node}
	}
	if p.Has(Node) {
		// A node token speaks for the node in sub; any other sub cannot
		// be compared with the xnames of requests.
		if !xname.IsNode(p.Subject) {
			return Principal{}, verified{}, fmt.Errorf("node token whose sub %q is no node xname", p.Subject)
		}
		p.Subject = xname.Normalize(p.Subject)
	}
	return p, verified{exp: std.Expiry.Time(), ks: ks, gen: gen}, nil
}

// validate checks the times, and for a site token its iss and aud; a node
// token's iss picked its keys and it carries no audience of the site's.
func (v *Verifier) validate(c jwt.Claims, node bool) error {
	if c.Expiry == nil {
		return errors.New("token has no exp")
	}
	e := jwt.Expected{Issuer: v.issuer, Time: v.now()}
	if node {
		e.Issuer = NodeIssuer
	} else if v.audience != "" {
		e.AnyAudience = jwt.Audience{v.audience}
	}
	return c.ValidateWithLeeway(e, v.skew)
}

// roles collects the suite's roles found at every claim path: a list of
// strings, or one string of space-separated names (as OAuth's scope).
// staticKeys is the key set of a PEM or JWKS file.
func staticKeys(path string, hc *http.Client, now func() time.Time) (*keySet, error) {
	keys, err := readKeyFile(path)
	if err != nil {
		return nil, err
	}
	return &keySet{hc: hc, now: now, keys: keys}, nil
}

func isURL(s string) bool { return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") }

func (v *Verifier) roles(all map[string]any) []Role {
	var out []Role
	for _, path := range v.claims {
		var cur any = all
		for _, part := range path {
			m, _ := cur.(map[string]any)
			cur = m[part]
		}
		var names []string
		switch val := cur.(type) {
		case string:
			names = strings.Fields(val)
		case []any:
			for _, n := range val {
				if s, ok := n.(string); ok {
					names = append(names, s)
				}
			}
		}
		for _, n := range names {
			r := Role(n)
			if slices.Contains(Roles(), r) && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}
