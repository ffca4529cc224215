package auth

import (
	"bytes"
	"context"
	"crypto"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// A JWKS is refetched when a token names a key it lacks, but not more often
// than minRefresh (a stream of tokens with made-up kids must not become a
// stream of requests to the issuer), and at the first token after maxAge
// (keys removed from the issuer stop verifying).
const (
	minRefresh = 30 * time.Second
	maxAge     = 10 * time.Minute
	jwksLimit  = 1 << 20
)

// keySet holds the verification keys of a static file or a JWKS URL.
type keySet struct {
	url  string // empty: static keys
	hc   *http.Client
	now  func() time.Time
	mu   sync.Mutex
	keys []jose.JSONWebKey
	// fetched is when keys were last fetched; tried when a fetch was
	// last attempted, successful or not.
	fetched, tried time.Time
	// gen counts the changes of keys: a token verified at an older
	// generation is checked again (tokenCache).
	gen uint64
}

// current reports whether a token verified at generation gen may be taken
// as verified still: the keys have not changed since, and key would not
// refetch them now (a JWKS older than maxAge is refetched at the next
// token checked in full, so a key the issuer removed stops verifying).
func (s *keySet) current(gen uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if gen != s.gen {
		return false
	}
	return s.url == "" || !s.due(s.now(), false)
}

// due reports whether key would fetch the JWKS now, for a token whose key
// is missing from the keys held or not. Call it with s.mu held.
func (s *keySet) due(now time.Time, missing bool) bool {
	stale := s.fetched.IsZero() || now.Sub(s.fetched) > maxAge
	wait := minRefresh
	if s.fetched.IsZero() {
		wait = time.Second // the issuer may come up after the daemon
	}
	return (stale || missing) && now.Sub(s.tried) >= wait
}

// key returns the key a token signed with alg and naming kid verifies
// against, and the generation of the keys it is one of, refetching the JWKS when kid is unknown or the keys are old. The
// fetch (up to 10 s) runs without the lock: only the request that started
// it waits for it, every other request is checked against the keys already
// held, so a token with a made-up kid cannot stall everyone's requests.
func (s *keySet) key(ctx context.Context, kid, alg string) (any, uint64, error) {
	s.mu.Lock()
	fetch := false
	if s.url != "" {
		now := s.now()
		if s.due(now, find(s.keys, kid, alg) == nil) {
			s.tried, fetch = now, true
		}
	}
	s.mu.Unlock()
	if fetch {
		keys, err := fetchJWKS(ctx, s.hc, s.url)
		s.mu.Lock()
		if err == nil {
			if !sameKeys(s.keys, keys) {
				s.gen++
			}
			s.keys, s.fetched = keys, s.now()
		}
		none := s.fetched.IsZero()
		s.mu.Unlock()
		if err != nil && none {
			return nil, 0, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := find(s.keys, kid, alg)
	if k == nil {
		return nil, 0, fmt.Errorf("no key for kid %q and alg %s", kid, alg)
	}
	return k.Key, s.gen, nil
}

// sameKeys reports whether a and b hold the same keys, in any order (an
// issuer need not list them in one order): a refetched JWKS that changed
// nothing keeps the verified tokens cached.
func sameKeys(a, b []jose.JSONWebKey) bool {
	if len(a) != len(b) {
		return false
	}
	ids := func(keys []jose.JSONWebKey) []string {
		var out []string
		for _, k := range keys {
			tp, err := k.Thumbprint(crypto.SHA256)
			if err != nil {
				return nil
			}
			out = append(out, k.KeyID+"\x00"+k.Algorithm+"\x00"+k.Use+"\x00"+string(tp))
		}
		slices.Sort(out)
		return out
	}
	ia, ib := ids(a), ids(b)
	return ia != nil && slices.Equal(ia, ib)
}

// find picks the signing key whose algorithm, if it states one, is alg: the
// one named kid, else the only key without a kid (a PEM file's), else, for a
// token naming no kid, the only key there is.
func find(keys []jose.JSONWebKey, kid, alg string) *jose.JSONWebKey {
	var named, anon []*jose.JSONWebKey
	for i := range keys {
		k := &keys[i]
		if (k.Use != "" && k.Use != "sig") || (k.Algorithm != "" && k.Algorithm != alg) {
			continue
		}
		switch {
		case kid != "" && k.KeyID == kid:
			named = append(named, k)
		case k.KeyID == "" || kid == "":
			anon = append(anon, k)
		}
	}
	switch {
	case len(named) > 0:
		return named[0]
	case len(anon) == 1:
		return anon[0]
	}
	return nil
}

func fetchJWKS(ctx context.Context, hc *http.Client, url string) ([]jose.JSONWebKey, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("jwks %s: %w", url, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("jwks %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jwks %s: status %d", url, resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, jwksLimit))
	if err != nil {
		return nil, fmt.Errorf("jwks %s: %w", url, err)
	}
	return parseJWKS(b)
}

func parseJWKS(b []byte) ([]jose.JSONWebKey, error) {
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("parse jwks: %w", err)
	}
	var keys []jose.JSONWebKey
	for _, k := range set.Keys {
		if k.IsPublic() {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("parse jwks: no public key in it")
	}
	return keys, nil
}

// readKeyFile reads a JWKS document or PEM public keys (PKIX "PUBLIC KEY",
// PKCS#1 "RSA PUBLIC KEY" or a "CERTIFICATE") from path.
func readKeyFile(path string) ([]jose.JSONWebKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		keys, err := parseJWKS(t)
		if err != nil {
			return nil, fmt.Errorf("key file %s: %w", path, err)
		}
		return keys, nil
	}
	var keys []jose.JSONWebKey
	for rest := b; ; {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		k, err := pemKey(blk)
		if err != nil {
			return nil, fmt.Errorf("key file %s: %w", path, err)
		}
		keys = append(keys, jose.JSONWebKey{Key: k})
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("key file %s: no PEM public key or JWKS in it", path)
	}
	return keys, nil
}

func pemKey(blk *pem.Block) (any, error) {
	switch blk.Type {
	case "PUBLIC KEY":
		return x509.ParsePKIXPublicKey(blk.Bytes)
	case "RSA PUBLIC KEY":
		return x509.ParsePKCS1PublicKey(blk.Bytes)
	case "CERTIFICATE":
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, err
		}
		return c.PublicKey, nil
	}
	return nil, fmt.Errorf("PEM block %q is not a public key", blk.Type)
}
