package component

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/hmsuite/hms/internal/problem"
	slsclient "github.com/hmsuite/hms/layout/client"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// SLS reads node defaults from the System Layout Service over HTTP
// (GET {base}/v1/hardware/{xname}, ExtraProperties NID, Role, SubRole).
type SLS struct {
	client *slsclient.Client
}

// NewSLS returns an SLS client for the service at base (such as
// http://127.0.0.1:8376); client nil means http.DefaultClient.
func NewSLS(base string, client *http.Client) *SLS {
	return &SLS{client: slsclient.New(base, client)}
}

// NodeInfo implements LayoutSource.
func (c *SLS) NodeInfo(ctx context.Context, xname string) (core.NodeInfo, bool, error) {
	hw, err := c.client.GetHardware(ctx, xname)
	if errors.Is(err, problem.ErrNotFound) {
		return core.NodeInfo{}, false, nil
	}
	if err != nil {
		return core.NodeInfo{}, false, fmt.Errorf("sls lookup %s: %w", xname, err)
	}
	var info core.NodeInfo
	if len(hw.ExtraProperties) > 0 {
		if err := json.Unmarshal(hw.ExtraProperties, &info); err != nil {
			return core.NodeInfo{}, false, fmt.Errorf("sls lookup %s: decode ExtraProperties: %w", xname, err)
		}
	}
	return info, true, nil
}
