package auth

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"
)

// TokenConfig is the Bearer token a client of the suite sends: Token as it
// is, or the content of File, re-read when the file changes (a rotating
// issuer rewrites it). Neither: no Authorization header.
type TokenConfig struct {
	Token, File string
}

// Set reports whether a token is configured.
func (c TokenConfig) Set() bool { return c.Token != "" || c.File != "" }

// Client returns a copy of hc (nil: a new client) whose requests carry the
// token, or hc itself when none is configured. A request that already has
// an Authorization header keeps it.
func (c TokenConfig) Client(hc *http.Client) *http.Client {
	if !c.Set() {
		return hc
	}
	var cp http.Client
	if hc != nil {
		cp = *hc
	}
	base := cp.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cp.Transport = &transport{base: base, src: &tokenSource{cfg: c}}
	return &cp
}

// transport adds the Bearer token to each request.
type transport struct {
	base http.RoundTripper
	src  *tokenSource
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Authorization") != "" {
		return t.base.RoundTrip(r)
	}
	tok, err := t.src.token()
	if err != nil {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, err
	}
	r2 := r.Clone(r.Context())
	r2.Header.Set("Authorization", "Bearer "+tok)
	return t.base.RoundTrip(r2)
}

// tokenSource reads a token file again when its size or modification time
// changed.
type tokenSource struct {
	cfg   TokenConfig
	mu    sync.Mutex
	tok   string
	mtime time.Time
	size  int64
}

func (s *tokenSource) token() (string, error) {
	if s.cfg.File == "" {
		return s.cfg.Token, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fi, err := os.Stat(s.cfg.File)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	if s.tok != "" && fi.ModTime().Equal(s.mtime) && fi.Size() == s.size {
		return s.tok, nil
	}
	b, err := os.ReadFile(s.cfg.File)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	tok := string(bytes.TrimSpace(b))
	if tok == "" {
		return "", fmt.Errorf("token file %s is empty", s.cfg.File)
	}
	s.tok, s.mtime, s.size = tok, fi.ModTime(), fi.Size()
	return tok, nil
}
