// Package client is the typed client of reds (package discovery), for the
// operator CLI and tests. It links only the wire types of discovery/wire.
package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hmsuite/hms/discovery/wire"
	"github.com/hmsuite/hms/internal/httpclient"
)

// Base is the reds API's path prefix.
const Base = "/v1"

// Client talks to one reds daemon.
type Client struct {
	hc *httpclient.Client
}

// New returns a client of the reds daemon at base (e.g.
// http://127.0.0.1:8269; a trailing /v1 is accepted). hc may be nil.
func New(base string, hc *http.Client, userAgent string) *Client {
	return &Client{hc: httpclient.NewDaemon("reds", base, Base, hc, userAgent)}
}

// Unknown lists the MACs reds has not placed yet, by MAC; deferred adds
// those on no switch still in their grace.
func (c *Client) Unknown(ctx context.Context, deferred bool) ([]wire.Unknown, error) {
	path := "/unknown"
	if deferred {
		path += "?deferred=true"
	}
	var out wire.UnknownList
	err := c.hc.Do(ctx, http.MethodGet, path, nil, &out)
	return out.Unknown, err
}

// Endpoints lists the endpoints reds placed; state, when not empty, selects
// those in that state.
func (c *Client) Endpoints(ctx context.Context, state string) ([]wire.Endpoint, error) {
	path := "/endpoints"
	if state != "" {
		path += "?state=" + url.QueryEscape(state)
	}
	var out wire.EndpointList
	err := c.hc.Do(ctx, http.MethodGet, path, nil, &out)
	return out.Endpoints, err
}
