package agent

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/hmsuite/hms/internal/httpclient"
)

// Client is a typed client of the hbtd API, used by the node agent, HSM and
// the CLI.
type Client struct {
	hc *httpclient.Client
}

// NewClient returns a client of the hbtd at baseURL (such as
// http://127.0.0.1:28500; /hmi/v1 is appended). hc nil means a client with
// keep-alive connections, enough for one agent's beats.
func NewClient(baseURL string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{}
	}
	base := strings.TrimSuffix(strings.TrimRight(baseURL, "/"), BasePath)
	return &Client{hc: httpclient.New("hbtd", base, BasePath, hc)}
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
	return c.hc.Do(ctx, method, path, in, out)
}
