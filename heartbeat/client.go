package heartbeat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
)

// Client is a typed client of the hbtd API, used by the node agent, HSM and
// the CLI.
type Client struct {
	base string
	hc   *http.Client
}

// NewClient returns a client of the hbtd at baseURL (such as
// http://127.0.0.1:28500; /hmi/v1 is appended). hc nil means a client with
// keep-alive connections, enough for one agent's beats.
func NewClient(baseURL string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{base: strings.TrimSuffix(strings.TrimRight(baseURL, "/"), BasePath), hc: hc}
}

// Beat sends one heartbeat.
func (c *Client) Beat(ctx context.Context, hb Heartbeat) error {
	return c.do(ctx, http.MethodPost, "/heartbeat", hb, nil)
}

// Beats sends heartbeats in one batch (POST /heartbeats, this suite's extension).
func (c *Client) Beats(ctx context.Context, hbs []Heartbeat) error {
	return c.do(ctx, http.MethodPost, "/heartbeats", hbs, nil)
}

// States returns the heartbeat status of each named component.
func (c *Client) States(ctx context.Context, xnames []string) ([]HBState, error) {
	var resp HBStatesResponse
	err := c.do(ctx, http.MethodPost, "/hbstates", HBStatesRequest{XNames: xnames}, &resp)
	return resp.HBStates, err
}

// State returns the heartbeat status of one component.
func (c *Client) State(ctx context.Context, xname string) (HBState, error) {
	var st HBState
	err := c.do(ctx, http.MethodGet, "/hbstate/"+url.PathEscape(xname), nil, &st)
	return st, err
}

// Params returns the tracker's parameters.
func (c *Client) Params(ctx context.Context) (Params, error) {
	var p Params
	err := c.do(ctx, http.MethodGet, "/params", nil, &p)
	return p, err
}

// PatchParams changes the parameters named in changes (parameter -> value).
func (c *Client) PatchParams(ctx context.Context, changes map[string]string) (Params, error) {
	var p Params
	err := c.do(ctx, http.MethodPatch, "/params", changes, &p)
	return p, err
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		buf, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("hbtd %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+BasePath+path, body)
	if err != nil {
		return fmt.Errorf("hbtd %s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("hbtd %s %s: %w: %w", method, path, problem.ErrUnavailable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return responseError(method, path, resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("hbtd %s %s: decode answer: %w", method, path, err)
	}
	return nil
}

// responseError turns an error answer into a kinded error carrying its detail.
func responseError(method, path string, resp *http.Response) error {
	var d problem.Details
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	detail := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &d) == nil && d.Detail != "" {
		detail = d.Detail
	}
	var kind error
	switch {
	case resp.StatusCode == http.StatusBadRequest:
		kind = problem.ErrInvalid
	case resp.StatusCode == http.StatusNotFound:
		kind = problem.ErrNotFound
	case resp.StatusCode == http.StatusRequestEntityTooLarge:
		kind = problem.ErrTooLarge
	default:
		kind = problem.ErrUnavailable
	}
	return fmt.Errorf("hbtd %s %s: status %d: %s: %w", method, path, resp.StatusCode, detail, kind)
}
