package statemgr

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hmsuite/hms/internal/httpclient"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// Client is the typed HSM v2 client other daemons (hbtd, discovery, DHCP,
// fanout) and the CLI use. Errors from HSM come back classified with the
// problem kinds (problem.ErrNotFound for a 404, ...), carrying HSM's detail.
type Client struct {
	hc *httpclient.Client
}

// NewClient returns a client for the HSM at base (such as
// http://127.0.0.1:27779; /hsm/v2 is appended). hc nil means http.DefaultClient.
func NewClient(base string, hc *http.Client) *Client {
	c := httpclient.New("hsm", base, Base, hc)
	// HMS services identify themselves with their User-Agent.
	c.UserAgent = "hms"
	return &Client{hc: c}
}

// do sends in (JSON, if not nil) and decodes the answer into out (if not nil).
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	return c.hc.Do(ctx, method, path, in, out)
}

// Component returns one component.
func (c *Client) Component(ctx context.Context, xname string) (hsm.Component, error) {
	var out hsm.Component
	err := c.do(ctx, http.MethodGet, "/State/Components/"+url.PathEscape(xname), nil, &out)
	return out, err
}

// Components returns the components the query selects; query holds the GET
// filters (type, state, stateonly, ...), nil for all.
func (c *Client) Components(ctx context.Context, query url.Values) ([]hsm.Component, error) {
	var out hsm.ComponentList
	path := "/State/Components"
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	err := c.do(ctx, http.MethodGet, path, nil, &out)
	return out.Components, err
}

// QueryComponents returns the listed components (POST /State/Components/Query),
// for lists too long for a URL.
func (c *Client) QueryComponents(ctx context.Context, ids []string) ([]hsm.Component, error) {
	var out hsm.ComponentList
	err := c.do(ctx, http.MethodPost, "/State/Components/Query", map[string]any{"ComponentIDs": ids}, &out)
	return out.Components, err
}

// PostComponents creates components (and with force overwrites the state
// fields of existing ones).
func (c *Client) PostComponents(ctx context.Context, comps []hsm.Component, force bool) error {
	return c.do(ctx, http.MethodPost, "/State/Components", map[string]any{"Components": comps, "Force": force}, nil)
}

// BulkStateData applies a StateData update to ids (PATCH BulkStateData).
// flag "" means OK; info may be nil.
func (c *Client) BulkStateData(ctx context.Context, ids []string, state, flag string, force bool, info *hsm.ExtendedInfo) error {
	body := patchBody{ComponentIDs: ids, State: &state, Force: force, ExtendedInfo: info}
	if flag != "" {
		body.Flag = &flag
	}
	return c.do(ctx, http.MethodPatch, "/State/Components/BulkStateData", body, nil)
}

// StateData applies a StateData update to one component.
func (c *Client) StateData(ctx context.Context, xname, state, flag string, force bool) error {
	body := patchBody{State: &state, Force: force}
	if flag != "" {
		body.Flag = &flag
	}
	return c.do(ctx, http.MethodPatch, "/State/Components/"+url.PathEscape(xname)+"/StateData", body, nil)
}

// BulkFlagOnly sets the Flag of ids.
func (c *Client) BulkFlagOnly(ctx context.Context, ids []string, flag string) error {
	return c.do(ctx, http.MethodPatch, "/State/Components/BulkFlagOnly", patchBody{ComponentIDs: ids, Flag: &flag}, nil)
}

// BulkEnabled sets Enabled on ids.
func (c *Client) BulkEnabled(ctx context.Context, ids []string, enabled bool) error {
	return c.do(ctx, http.MethodPatch, "/State/Components/BulkEnabled", patchBody{ComponentIDs: ids, Enabled: &enabled}, nil)
}

// BulkSoftwareStatus sets SoftwareStatus on ids.
func (c *Client) BulkSoftwareStatus(ctx context.Context, ids []string, status string) error {
	return c.do(ctx, http.MethodPatch, "/State/Components/BulkSoftwareStatus", patchBody{ComponentIDs: ids, SoftwareStatus: &status}, nil)
}

// BulkRole sets Role and SubRole on ids.
func (c *Client) BulkRole(ctx context.Context, ids []string, role, subRole string) error {
	return c.do(ctx, http.MethodPatch, "/State/Components/BulkRole", patchBody{ComponentIDs: ids, Role: &role, SubRole: &subRole}, nil)
}

// EthernetInterfaces lists interfaces; query holds the filters (MACAddress,
// ComponentID, ...), nil for all.
func (c *Client) EthernetInterfaces(ctx context.Context, query url.Values) ([]hsm.EthernetInterface, error) {
	var out []hsm.EthernetInterface
	path := "/Inventory/EthernetInterfaces"
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	err := c.do(ctx, http.MethodGet, path, nil, &out)
	return out, err
}

// EthernetInterface returns one interface by ID or MAC address.
func (c *Client) EthernetInterface(ctx context.Context, id string) (hsm.EthernetInterface, error) {
	var out hsm.EthernetInterface
	err := c.do(ctx, http.MethodGet, "/Inventory/EthernetInterfaces/"+url.PathEscape(id), nil, &out)
	return out, err
}

// CreateEthernetInterface creates ei; an existing MAC is problem.ErrConflict.
func (c *Client) CreateEthernetInterface(ctx context.Context, ei hsm.EthernetInterface) error {
	return c.do(ctx, http.MethodPost, "/Inventory/EthernetInterfaces", ei, nil)
}

// PatchEthernetInterface updates an interface and returns the result.
func (c *Client) PatchEthernetInterface(ctx context.Context, id string, p hsm.EthernetPatch) (hsm.EthernetInterface, error) {
	var out hsm.EthernetInterface
	err := c.do(ctx, http.MethodPatch, "/Inventory/EthernetInterfaces/"+url.PathEscape(id), p, &out)
	return out, err
}

// DeleteEthernetInterface deletes one interface.
func (c *Client) DeleteEthernetInterface(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/Inventory/EthernetInterfaces/"+url.PathEscape(id), nil, nil)
}

// Subscribe creates an SCN subscription and returns it with its ID.
func (c *Client) Subscribe(ctx context.Context, sub hsm.Subscription) (hsm.Subscription, error) {
	var out hsm.Subscription
	err := c.do(ctx, http.MethodPost, "/Subscriptions/SCN", sub, &out)
	return out, err
}

// Unsubscribe deletes an SCN subscription.
func (c *Client) Unsubscribe(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/Subscriptions/SCN/"+url.PathEscape(id), nil, nil)
}

// Ready reports whether HSM answers its readiness probe.
func (c *Client) Ready(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/service/ready", nil, nil)
}
