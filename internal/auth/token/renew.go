package token

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
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
func (s *tokenSource) renew(ctx context.Context, tok string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := tok
	if s.renewed != "" && expiry(s.renewed).After(expiry(tok)) {
		cur = s.renewed
	}
	iat, exp := issued(cur), expiry(cur)
	now := time.Now()
	if exp.IsZero() || now.Before(iat.Add(exp.Sub(iat)/2)) || now.Sub(s.tried) < renewRetry {
		return cur
	}
	s.tried = now
	fresh, err := fetch(ctx, s.hc, s.cfg.RenewURL, cur)
	if err != nil {
		return cur
	}
	s.renewed = fresh
	return fresh
}

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
