// Package httpclient is the JSON-over-HTTP client the typed clients of the
// suite's daemons are built on: it encodes requests, decodes 2xx answers, always
// drains and closes bodies, and turns error answers (problem+json or not) into
// errors of the problem kinds carrying the peer's detail.
package httpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
)

// Client sends requests to one service below Base.
type Client struct {
	// Service names the peer in error messages ("hsm", "sls", ...).
	Service string
	// Base is the URL every path is appended to, such as http://h:27779/hsm/v2.
	Base string
	// HTTP sends the requests; nil means http.DefaultClient.
	HTTP *http.Client
	// UserAgent, if set, is sent on every request, as HMS services identify
	// themselves.
	UserAgent string
}

// New returns a client of service at base (trailing slashes trimmed) + prefix.
func New(service, base, prefix string, hc *http.Client) *Client {
	return &Client{Service: service, Base: strings.TrimRight(base, "/") + prefix, HTTP: hc}
}

// NewDaemon returns the client a daemon's typed client is built on: service
// at base, its API below prefix. base may end in prefix (an operator gives
// either http://h:27779 or http://h:27779/hsm/v2) and in slashes; userAgent
// "" is "hms", as the suite's daemons and CLI identify themselves.
func NewDaemon(service, base, prefix string, hc *http.Client, userAgent string) *Client {
	c := New(service, strings.TrimSuffix(strings.TrimRight(base, "/"), prefix), prefix, hc)
	c.UserAgent = userAgent
	if c.UserAgent == "" {
		c.UserAgent = "hms"
	}
	return c
}

// Do sends in as JSON (when not nil) and decodes a 2xx answer into out (when
// not nil).
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	if in == nil {
		return c.DoBody(ctx, method, path, nil, "", out)
	}
	b, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("%s %s %s: encode: %w", c.Service, method, path, err)
	}
	return c.DoBody(ctx, method, path, bytes.NewReader(b), "application/json", out)
}

// DoBody sends body with content type ctype and decodes a 2xx answer into out.
func (c *Client) DoBody(ctx context.Context, method, path string, body io.Reader, ctype string, out any) error {
	_, err := c.DoHeader(ctx, method, path, body, ctype, out)
	return err
}

// DoHeader is DoBody that also returns the answer's header, for the peers
// that answer in a header (BSS's BSS-Referral-Token).
func (c *Client) DoHeader(ctx context.Context, method, path string, body io.Reader, ctype string, out any) (http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s %s: %w", c.Service, method, path, err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s %s: %w: %w", c.Service, method, path, problem.ErrUnavailable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return resp.Header, c.responseError(method, path, resp)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Header, nil
	}
	// An empty 2xx body leaves out as it was: some answers carry nothing.
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil && !errors.Is(err, io.EOF) {
		return resp.Header, fmt.Errorf("%s %s %s: decode answer: %w", c.Service, method, path, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Header, nil
}

// responseError turns an error answer into a kinded error carrying the
// problem detail (or the start of the body when it is not problem+json).
func (c *Client) responseError(method, path string, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_, _ = io.Copy(io.Discard, resp.Body)
	var d problem.Details
	detail := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &d) == nil && d.Detail != "" {
		detail = d.Detail
	}
	return &statusError{status: resp.StatusCode, err: problem.FromStatus(resp.StatusCode,
		fmt.Sprintf("%s %s %s: %d %s", c.Service, method, path, resp.StatusCode, detail))}
}

// statusError is an HTTP error answer: its problem kind, plus the status.
type statusError struct {
	status int
	err    error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// StatusCode returns the HTTP status of the error answer err reports, or 0
// when err is nil or did not come from an answer (a transport failure, ...).
// Callers that must tell statuses of one problem kind apart (retry a 429,
// give up on a 422) use it; the rest use errors.Is with the problem kinds.
func StatusCode(err error) int {
	var se *statusError
	if errors.As(err, &se) {
		return se.status
	}
	return 0
}
