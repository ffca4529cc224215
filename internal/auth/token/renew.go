package token

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// renewRetry is how long a failed renewal waits before the next try.
const renewRetry = time.Minute

// renew returns the freshest token: tok itself, or the token RenewURL gave
// for it, exchanged again once it is past half its life. It never fails:
// a token that cannot be renewed is sent as it is until it expires.
//
// The lock is never held across the exchange. One caller makes it; the
// others send the current token meanwhile while it is still valid, and
// wait for the exchange (or their own context) once it has expired.
func (s *tokenSource) renew(ctx context.Context, tok string) string {
	s.mu.Lock()
	cur := s.freshest(tok)
	iat, exp := issued(cur), expiry(cur)
	now := s.clock()
	if exp.IsZero() || now.Before(iat.Add(exp.Sub(iat)/2)) {
		s.mu.Unlock()
		return cur
	}
	f := s.renewing
	if f == nil {
		if now.Sub(s.tried) < renewRetry {
			s.mu.Unlock()
			return cur
		}
		s.tried = now
		f = &flight{done: make(chan struct{})}
		s.renewing = f
		s.mu.Unlock()
		s.leadRenewal(ctx, f, cur)
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.freshest(tok)
	}
	s.mu.Unlock()
	if now.Before(exp) {
		return cur
	}
	select {
	case <-f.done:
	case <-ctx.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.freshest(tok)
}

// leadRenewal renews cur as flight f's leader. f ends (renewing cleared,
// done closed) however the fetch returns, a panic included, so the
// callers waiting for it are never left behind.
func (s *tokenSource) leadRenewal(ctx context.Context, f *flight, cur string) {
	fresh, err := "", errors.New("token renewal did not finish")
	defer func() {
		s.mu.Lock()
		if err == nil {
			s.renewed = fresh
		}
		s.renewing = nil
		close(f.done)
		s.mu.Unlock()
	}()
	// Not the caller's cancellation: others may be waiting for it (fetch
	// bounds it).
	fresh, err = fetch(context.WithoutCancel(ctx), s.hc, s.cfg.RenewURL, cur)
}

// freshest is the later-expiring of tok and the last renewed token; s.mu
// held.
func (s *tokenSource) freshest(tok string) string {
	if s.renewed != "" && expiry(s.renewed).After(expiry(tok)) {
		return s.renewed
	}
	return tok
}

// flight is a fetch in progress, which other callers wait for rather than
// starting their own; done is closed when it has ended.
type flight struct{ done chan struct{} }

// fetch exchanges tok at url for a fresh token.
func fetch(ctx context.Context, hc *http.Client, url, tok string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", fmt.Errorf("renew token: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("renew token: %w", err)
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
	}
	err = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body)
	if resp.StatusCode != http.StatusOK || err != nil || body.AccessToken == "" {
		return "", fmt.Errorf("renew token: status %d", resp.StatusCode)
	}
	return body.AccessToken, nil
}

// claims reads the payload of a JWT without verifying it: the client only
// needs to know when its own token runs out. Zero for anything else.
func claims(tok string) (iat, exp int64) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return 0, 0
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return 0, 0
	}
	var c struct {
		Iat, Exp int64
	}
	if json.Unmarshal(b, &c) != nil {
		return 0, 0
	}
	return c.Iat, c.Exp
}

func expiry(tok string) time.Time {
	if _, exp := claims(tok); exp > 0 {
		return time.Unix(exp, 0)
	}
	return time.Time{}
}

func issued(tok string) time.Time {
	iat, exp := claims(tok)
	if iat <= 0 || iat > exp {
		return time.Unix(exp, 0)
	}
	return time.Unix(iat, 0)
}

// CmdlineParam is the kernel command line parameter bss puts a node's
// token in (ipxe.CmdlineParam).
const CmdlineParam = "hms_node_token"

// FromCmdline returns the value of CmdlineParam in the kernel command line
// file path (/proc/cmdline); "" when the file or the parameter is missing.
func FromCmdline(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<16))
	sc.Buffer(make([]byte, 0, 4096), 1<<16)
	sc.Split(bufio.ScanWords)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), CmdlineParam+"="); ok {
			return v
		}
	}
	return ""
}
