package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// Groups returns HSM's groups with their members; query holds the GET
// filters (group: labels, tag), nil for all.
func (c *Client) Groups(ctx context.Context, query url.Values) ([]hsm.Group, error) {
	var out []hsm.Group
	err := c.do(ctx, http.MethodGet, withQuery("/groups", query), nil, &out)
	return out, err
}
