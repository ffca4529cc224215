// Package token is the client side of the suite's authentication: the
// Bearer token a daemon or a tool of the suite sends to the daemons it
// calls, given by -token or -token-file (re-read when it changes). It is a
// leaf package: node-side binaries (hbagent) link nothing of the server side.
package token

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/hmsuite/hms/internal/cli"
)

// Config is the Bearer token a client of the suite sends: Token as it
// is, or the content of File, re-read when the file changes (a rotating
// issuer rewrites it). Neither: no Authorization header.
type Config struct {
	Token, File string
	// RenewURL, when set, is where a token past half its life is
	// exchanged for a fresh one (a GET with the token, answered
	// {"access_token": ...}): bss's /boot/v1/node-token?name=<xname> for a
	// node token. A failed renewal keeps the token and is tried again a
	// minute later.
	RenewURL string
	// OAuth, when its TokenURL is set, fetches the token instead with the
	// OAuth 2.0 client credentials grant.
	OAuth ClientCredentials
}

// Set reports whether a token is configured.
func (c Config) Set() bool { return c.Token != "" || c.File != "" || c.OAuth.TokenURL != "" }

// Client returns a copy of hc (nil: a new client) whose requests carry the
// token, or hc itself when none is configured. A request that already has
// an Authorization header keeps it.
func (c Config) Client(hc *http.Client) *http.Client { return c.ClientIf(hc, nil) }

// ClientIf is Client sending the token only on requests allow accepts (nil:
// all): a client that also calls URLs third parties chose (HSM's SCN
// callbacks) must not hand them the token.
func (c Config) ClientIf(hc *http.Client, allow func(*http.Request) bool) *http.Client {
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
	cp.Transport = &transport{base: base, src: &tokenSource{cfg: c, hc: &http.Client{Transport: base, Timeout: 10 * time.Second}},
		allow: allow}
	return &cp
}

// Source returns a function giving the token to send now (the file's
// content as last changed, renewed when RenewURL says so), for clients that
// write their requests themselves; nil when no token is configured.
func (c Config) Source() func(ctx context.Context) (string, error) {
	if !c.Set() {
		return nil
	}
	src := &tokenSource{cfg: c, hc: &http.Client{Timeout: 10 * time.Second}}
	return src.token
}

// transport adds the Bearer token to each request.
type transport struct {
	base  http.RoundTripper
	src   *tokenSource
	allow func(*http.Request) bool
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Authorization") != "" || (t.allow != nil && !t.allow(r)) {
		return t.base.RoundTrip(r)
	}
	tok, err := t.src.token(r.Context())
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
	cfg   Config
	hc    *http.Client // renews
	mu    sync.Mutex
	tok   string
	mtime time.Time
	size  int64
	// renewed is the token RenewURL last gave and when renewal was last
	// tried.
	renewed string
	tried   time.Time
	// expires is when a client credentials token is fetched again.
	expires time.Time
	// renewing and fetching are the renewal and the client credentials
	// fetch in progress (nil: none); fetchErr is how the last fetch failed.
	renewing, fetching *flight
	fetchErr           error
	// now is the clock (nil: time.Now).
	now func() time.Time
}

func (s *tokenSource) clock() time.Time {
	if s.now == nil {
		return time.Now()
	}
	return s.now()
}

func (s *tokenSource) token(ctx context.Context) (string, error) {
	tok, err := s.current(ctx)
	if err != nil || s.cfg.RenewURL == "" {
		return tok, err
	}
	return s.renew(ctx, tok), nil
}

func (s *tokenSource) current(ctx context.Context) (string, error) {
	if s.cfg.OAuth.TokenURL != "" {
		return s.clientCredentials(ctx)
	}
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

// Flags are -token and -token-file, the token a client of the suite
// sends; Register declares them.
type Flags struct {
	f           *cli.FlagSet
	name        string // "token": -token and -token-file
	token, file *string
	oauth       struct{ url, id, secret, scope *string } // Register's only
}

// Register declares -token and -token-file on f, and the OAuth 2.0 client
// credentials flags that fetch the token instead.
func Register(f *cli.FlagSet) *Flags {
	fl := RegisterAs(f, "token", "sent to the suite's daemons")
	fl.oauth.url = f.String("oauth-token-url", "", "OAuth 2.0 token endpoint `URL` (Keycloak: .../realms/R/protocol/openid-connect/token): fetch the token sent to the suite's daemons with the client credentials grant, again before it expires, instead of -token/-token-file")
	fl.oauth.id = f.String("oauth-client-id", "", "client ID for -oauth-token-url")
	fl.oauth.secret = f.String("oauth-client-secret-file", "", "`FILE` holding the client secret for -oauth-token-url; re-read at each fetch")
	fl.oauth.scope = f.String("oauth-scope", "", "space-separated scopes asked of -oauth-token-url (empty: none)")
	return fl
}

// RegisterAs declares -<name> and -<name>-file on f, for a token what says
// where it goes ("sent with the SCNs delivered to subscribers").
func RegisterAs(f *cli.FlagSet, name, what string) *Flags {
	return &Flags{f: f, name: name,
		token: f.String(name, "", "Bearer token "+what+" (prefer -"+f.Name(name)+"-file: a flag shows in ps)"),
		file:  f.String(name+"-file", "", "file holding the Bearer token "+what+"; re-read when it changes"),
	}
}

// Config returns the token the flags give.
func (fl *Flags) Config() (Config, error) {
	if *fl.token != "" && *fl.file != "" {
		return Config{}, cli.Usagef("-%s and -%s exclude each other", fl.f.Name(fl.name), fl.f.Name(fl.name+"-file"))
	}
	if *fl.file != "" {
		if err := cli.CheckFile(fl.f.Name(fl.name+"-file"), *fl.file); err != nil {
			return Config{}, err
		}
	}
	c := Config{Token: *fl.token, File: *fl.file}
	if fl.oauth.url == nil || *fl.oauth.url == "" {
		return c, nil
	}
	if c.Token != "" || c.File != "" || *fl.oauth.id == "" || *fl.oauth.secret == "" {
		return Config{}, cli.Usagef("-%s needs -%s and -%s, and excludes -%s and -%s", fl.f.Name("oauth-token-url"),
			fl.f.Name("oauth-client-id"), fl.f.Name("oauth-client-secret-file"), fl.f.Name(fl.name), fl.f.Name(fl.name+"-file"))
	}
	if err := cli.CheckFile(fl.f.Name("oauth-client-secret-file"), *fl.oauth.secret); err != nil {
		return Config{}, err
	}
	c.OAuth = ClientCredentials{TokenURL: *fl.oauth.url, ClientID: *fl.oauth.id, SecretFile: *fl.oauth.secret, Scope: *fl.oauth.scope}
	return c, nil
}

// Env is the variable the suite's tools (hms, hbagent) read a token from
// when neither flag is given.
const Env = "HMS_TOKEN"

// ConfigOrEnv is Config, falling back to the token in $HMS_TOKEN.
func (fl *Flags) ConfigOrEnv(getenv func(string) string) (Config, error) {
	c, err := fl.Config()
	if err == nil && !c.Set() {
		c.Token = getenv(Env)
	}
	return c, err
}

// String shows the flags' names, for messages.
func (fl *Flags) String() string {
	return fmt.Sprintf("-%s/-%s", fl.f.Name(fl.name), fl.f.Name(fl.name+"-file"))
}
