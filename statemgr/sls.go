package statemgr

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// SLS reads node defaults from the System Layout Service over HTTP
// (GET {base}/v1/hardware/{xname}, ExtraProperties NID, Role, SubRole).
type SLS struct {
	base   string
	client *http.Client
}

// NewSLS returns an SLS client for the service at base (such as
// http://127.0.0.1:8376); client nil means http.DefaultClient.
func NewSLS(base string, client *http.Client) *SLS {
	if client == nil {
		client = http.DefaultClient
	}
	return &SLS{base: strings.TrimRight(base, "/"), client: client}
}

// NodeInfo implements LayoutSource.
func (c *SLS) NodeInfo(ctx context.Context, xname string) (NodeInfo, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/hardware/"+url.PathEscape(xname), nil)
	if err != nil {
		return NodeInfo{}, false, fmt.Errorf("sls lookup %s: %w", xname, err)
	}
	req.Header.Set("User-Agent", "hsm")
	resp, err := c.client.Do(req)
	if err != nil {
		return NodeInfo{}, false, fmt.Errorf("sls lookup %s: %w", xname, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		_, _ = io.Copy(io.Discard, resp.Body)
		return NodeInfo{}, false, nil
	}
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return NodeInfo{}, false, fmt.Errorf("sls lookup %s: %s", xname, resp.Status)
	}
	var hw struct {
		ExtraProperties NodeInfo `json:"ExtraProperties"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&hw); err != nil {
		return NodeInfo{}, false, fmt.Errorf("sls lookup %s: decode: %w", xname, err)
	}
	return hw.ExtraProperties, true, nil
}
