package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// ComponentEndpoints lists HSM's ComponentEndpoints (how to reach each
// component over Redfish), filtered by query (id, type, redfish_ep, ...).
func (c *Client) ComponentEndpoints(ctx context.Context, query url.Values) ([]hsm.ComponentEndpoint, error) {
	var out struct {
		ComponentEndpoints []hsm.ComponentEndpoint `json:"ComponentEndpoints"`
	}
	err := c.do(ctx, http.MethodGet, withQuery("/Inventory/ComponentEndpoints", query), nil, &out)
	return out.ComponentEndpoints, err
}
