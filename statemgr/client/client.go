// Package client is the typed HSM v2 client every other daemon (hbtd, hmnfd,
// discovery, DHCP, ...) and the CLI use to talk to HSM. It speaks only HTTP
// and the wire types of package hsm: no SQL, no Redfish library, no server.
// Errors from HSM come back classified with the problem kinds
// (problem.ErrNotFound for a 404, ...), carrying HSM's detail;
// httpclient.StatusCode tells the HTTP status when a caller needs it.
package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hmsuite/hms/internal/httpclient"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// Client calls one HSM.
type Client struct {
	hc *httpclient.Client
}

// New returns a client for the HSM at base (such as http://127.0.0.1:27779;
// /hsm/v2 is appended, and a base already ending in /hsm/v2 is accepted).
// hc nil means http.DefaultClient. userAgent names the calling service, as
// HMS services identify themselves ("" means "hms").
func New(base string, hc *http.Client, userAgent string) *Client {
	return &Client{hc: httpclient.NewDaemon("hsm", base, hsm.Base, hc, userAgent)}
}

// URL returns the HSM API root this client calls (ending in /hsm/v2).
func (c *Client) URL() string { return c.hc.Base }

// do sends in (JSON, if not nil) and decodes the answer into out (if not nil).
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	return c.hc.Do(ctx, method, path, in, out)
}

// withQuery appends query to path when it holds anything.
func withQuery(path string, query url.Values) string {
	if len(query) > 0 {
		return path + "?" + query.Encode()
	}
	return path
}

// Ready reports whether HSM answers its readiness probe.
func (c *Client) Ready(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/service/ready", nil, nil)
}

// Values returns the enumerations HSM validates (GET /service/values): the
// states, roles, subroles, ... it accepts, site additions included.
func (c *Client) Values(ctx context.Context) (hsm.Values, error) {
	var out hsm.Values
	err := c.do(ctx, http.MethodGet, "/service/values", nil, &out)
	return out, err
}
