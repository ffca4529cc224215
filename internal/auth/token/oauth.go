package token

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// ClientCredentials is an OAuth 2.0 client of the client credentials grant
// (RFC 6749 section 4.4): the token is fetched from TokenURL with ClientID
// and the secret in SecretFile (HTTP basic authentication), and fetched
// again shortly before it expires.
type ClientCredentials struct {
	TokenURL, ClientID, SecretFile, Scope string
}

// oauthEarly is how long before its expiry a fetched token is replaced.
const oauthEarly = 30 * time.Second

// clientCredentials returns the fetched token, fetching a new one when there
// is none or it is about to expire. The lock is not held across the fetch:
// one caller fetches, the others send the old token meanwhile (it is
// replaced before it expires), or, when there is none yet, wait for the
// fetch or their own context.
func (s *tokenSource) clientCredentials(ctx context.Context) (string, error) {
	s.mu.Lock()
	if s.tok != "" && s.clock().Before(s.expires) {
		defer s.mu.Unlock()
		return s.tok, nil
	}
	if f := s.fetching; f != nil {
		old := s.tok
		s.mu.Unlock()
		if old != "" {
			return old, nil
		}
		select {
		case <-f.done:
		case <-ctx.Done():
			return "", fmt.Errorf("oauth token: %w", ctx.Err())
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.tok == "" {
			return "", s.fetchErr
		}
		return s.tok, nil
	}
	f := &flight{done: make(chan struct{})}
	s.fetching = f
	s.mu.Unlock()
	return s.leadFetch(ctx, f)
}

// leadFetch fetches a token as flight f's leader. f ends (fetching
// cleared, done closed) however the fetch returns, a panic included, so
// the callers waiting for it are never left behind.
func (s *tokenSource) leadFetch(ctx context.Context, f *flight) (tok string, err error) {
	var ttl time.Duration
	err = errors.New("oauth token fetch did not finish")
	defer func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.fetching, s.fetchErr = nil, err
		if err == nil {
			s.tok, s.expires = tok, s.clock().Add(max(ttl-oauthEarly, ttl/2))
		}
		close(f.done)
	}()
	// Not the caller's cancellation: others may be waiting for it (fetch
	// bounds it).
	tok, ttl, err = s.cfg.OAuth.fetch(context.WithoutCancel(ctx), s.hc)
	if err != nil {
		return "", err
	}
	return tok, nil
}

// fetch asks the token endpoint for a token and how long it is valid.
func (cc ClientCredentials) fetch(ctx context.Context, hc *http.Client) (string, time.Duration, error) {
	secret, err := os.ReadFile(cc.SecretFile)
	if err != nil {
		return "", 0, fmt.Errorf("oauth client secret: %w", err)
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	if cc.Scope != "" {
		form.Set("scope", cc.Scope)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cc.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, fmt.Errorf("oauth token: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(cc.ClientID), url.QueryEscape(string(bytes.TrimSpace(secret))))
	resp, err := hc.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("oauth token: %w", err)
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body)
	if resp.StatusCode != http.StatusOK || err != nil || body.AccessToken == "" {
		return "", 0, fmt.Errorf("oauth token %s: status %d", cc.TokenURL, resp.StatusCode)
	}
	ttl := time.Duration(body.ExpiresIn) * time.Second
	if ttl <= 0 {
		ttl = 5 * time.Minute // no expires_in: fetch again now and then
	}
	return body.AccessToken, ttl, nil
}
