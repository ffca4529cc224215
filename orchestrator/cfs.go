package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/hmsuite/hms/internal/httpclient"
)

// CFS statuses of a component (configuration_status).
const (
	CFSConfigured = "configured"
	CFSPending    = "pending"
	CFSFailed     = "failed"
)

// Configurer is what bos asks a CFS-compatible service (CFS v3's components, the
// subset BOS uses): set nodes' desired configuration, read how it went.
type Configurer interface {
	CFSComponents(ctx context.Context, ids []string) ([]CFSComponent, error)
	SetDesiredConfig(ctx context.Context, ids []string, config string) error
}

// CFSComponent is a CFS v3 component, the fields bos reads.
type CFSComponent struct {
	ID                  string `json:"id"`
	DesiredConfig       string `json:"desired_config"`
	ConfigurationStatus string `json:"configuration_status"`
	Enabled             *bool  `json:"enabled,omitempty"`
	// Error is why a -config-command run failed (CFS reports none here).
	Error string `json:"-"`
}

// CFSClient talks to CFS v3 (-cfs-url).
type CFSClient struct {
	hc *httpclient.Client
}

// NewCFSClient returns a client of the CFS at base (a trailing /v3 is
// accepted). hc may be nil.
func NewCFSClient(base string, hc *http.Client) *CFSClient {
	base = strings.TrimSuffix(strings.TrimRight(base, "/"), "/v3")
	c := httpclient.New("cfs", base, "/v3", hc)
	c.UserAgent = "bos"
	return &CFSClient{hc: c}
}

// CFSComponents reads the named components (GET /v3/components?ids=).
func (c *CFSClient) CFSComponents(ctx context.Context, ids []string) ([]CFSComponent, error) {
	var out struct {
		Components []CFSComponent `json:"components"`
	}
	err := c.hc.Do(ctx, http.MethodGet, "/components?"+url.Values{"ids": {strings.Join(ids, ",")}}.Encode(), nil, &out)
	return out.Components, err
}

// SetDesiredConfig sets the desired configuration of the named components
// and enables them in CFS, as BOS does (PATCH /v3/components with ids).
func (c *CFSClient) SetDesiredConfig(ctx context.Context, ids []string, config string) error {
	body := map[string]any{"patch": map[string]any{"desired_config": config, "enabled": true},
		"filters": map[string]any{"ids": strings.Join(ids, ",")}}
	return c.hc.Do(ctx, http.MethodPatch, "/components", body, nil)
}

// setConfigs tells CFS the desired configuration of the enabled components
// whose configuration CFS does not hold yet (as this pass's status
// operator read it), one PATCH per configuration and batch: as BOS, before
// the power-on, so CFS configures the node once it is up.
func (s *Service) setConfigs(ctx context.Context) error {
	if s.cfs == nil {
		return nil
	}
	groups := map[string][]string{}
	s.mu.Lock()
	for id, c := range s.comps {
		want := c.DesiredState.Configuration
		if o, ok := s.observed[id]; ok && c.Enabled && want != "" && c.Status.StatusOverride == "" && o.cfsDesired != want {
			groups[want] = append(groups[want], id)
		}
	}
	s.mu.Unlock()
	var errs []error
	for _, config := range slices.Sorted(maps.Keys(groups)) {
		ids := groups[config]
		slices.Sort(ids)
		for len(ids) > 0 {
			n := min(len(ids), 500)
			if err := s.cfs.SetDesiredConfig(ctx, ids[:n], config); err != nil {
				errs = append(errs, fmt.Errorf("cfs: set desired configuration %s: %w", config, err))
			}
			ids = ids[n:]
		}
	}
	return errors.Join(errs...)
}
