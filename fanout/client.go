package fanout

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hmsuite/hms/internal/httpclient"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// Client is a typed client of the hmnfd v2 API, for daemons that subscribe to
// state changes and for tools.
type Client struct {
	hc *httpclient.Client
}

// NewClient returns a client of the hmnfd at base (e.g. http://127.0.0.1:28600).
func NewClient(base string, hc *http.Client) *Client {
	return &Client{hc: httpclient.New("hmnfd", base, "", hc)}
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
func (c *Client) PostSCN(ctx context.Context, scn hsm.SCN) error {
	return c.do(ctx, http.MethodPost, "/hmi/v2/scn", scn, nil)
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	return c.hc.Do(ctx, method, path, in, out)
}
