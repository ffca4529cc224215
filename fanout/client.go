package fanout

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/hmsuite/hms/internal/problem"
)

// Client is a typed client of the hmnfd v2 API, for daemons that subscribe to
// state changes and for tools.
type Client struct {
	base string
	hc   *http.Client
}

// NewClient returns a client of the hmnfd at base (e.g. http://127.0.0.1:28600).
func NewClient(base string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: base, hc: hc}
}

func agentPath(k Key) string {
	return "/hmi/v2/subscriptions/" + url.PathEscape(k.Component) + "/agents/" + url.PathEscape(k.Agent)
}

// Subscribe creates k's subscription.
func (c *Client) Subscribe(ctx context.Context, k Key, sub Subscription) error {
	return c.do(ctx, http.MethodPost, agentPath(k), sub, nil)
}

// Update patches k's subscription.
func (c *Client) Update(ctx context.Context, k Key, sub Subscription) error {
	return c.do(ctx, http.MethodPatch, agentPath(k), sub, nil)
}

// Unsubscribe deletes k's subscription.
func (c *Client) Unsubscribe(ctx context.Context, k Key) error {
	return c.do(ctx, http.MethodDelete, agentPath(k), nil, nil)
}

// List returns every subscription, or those of component when it is not empty.
func (c *Client) List(ctx context.Context, component string) ([]Subscription, error) {
	p := "/hmi/v2/subscriptions"
	if component != "" {
		p += "/" + url.PathEscape(component)
	}
	var out SubscriptionList
	err := c.do(ctx, http.MethodGet, p, nil, &out)
	return out.SubscriptionList, err
}

// PostSCN sends an SCN for fanout, as HSM does in callback mode.
func (c *Client) PostSCN(ctx context.Context, scn SCN) error {
	return c.do(ctx, http.MethodPost, "/hmi/v2/scn", scn, nil)
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, problem.Unavailablef("hmnfd unreachable: %v", err))
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var p problem.Details
		_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&p)
		return fmt.Errorf("%s %s: %w", method, path, statusError(resp.StatusCode, p.Detail))
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return fmt.Errorf("decode %s %s: %w", method, path, err)
		}
	}
	return nil
}

func statusError(status int, detail string) error {
	switch status {
	case http.StatusBadRequest:
		return problem.Invalidf("%s", detail)
	case http.StatusNotFound:
		return problem.NotFoundf("%s", detail)
	case http.StatusConflict:
		return problem.Conflictf("%s", detail)
	default:
		return problem.Unavailablef("hmnfd answered %d: %s", status, detail)
	}
}
