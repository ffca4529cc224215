package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hmsuite/hms/statemgr/hsm"
)

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
	err := c.do(ctx, http.MethodGet, withQuery("/State/Components", query), nil, &out)
	return out.Components, err
}

// ComponentsUnder returns xname and the components below it (GET
// /State/Components/Query/{xname}); query holds the GET filters, nil for none.
func (c *Client) ComponentsUnder(ctx context.Context, xname string, query url.Values) ([]hsm.Component, error) {
	var out hsm.ComponentList
	err := c.do(ctx, http.MethodGet, withQuery("/State/Components/Query/"+url.PathEscape(xname), query), nil, &out)
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

// stateBody is the body of the StateData PATCHes, single and bulk.
type stateBody struct {
	ComponentIDs []string          `json:"ComponentIDs,omitempty"`
	State        string            `json:"State"`
	Flag         string            `json:"Flag,omitempty"`
	Force        bool              `json:"Force,omitempty"`
	ExtendedInfo *hsm.ExtendedInfo `json:"ExtendedInfo,omitempty"`
}

// BulkStateData applies a StateData update to ids (PATCH BulkStateData).
// flag "" means OK; info may be nil.
func (c *Client) BulkStateData(ctx context.Context, ids []string, state, flag string, force bool, info *hsm.ExtendedInfo) error {
	body := stateBody{ComponentIDs: ids, State: state, Flag: flag, Force: force, ExtendedInfo: info}
	return c.do(ctx, http.MethodPatch, "/State/Components/BulkStateData", body, nil)
}

// StateData applies a StateData update to one component.
func (c *Client) StateData(ctx context.Context, xname, state, flag string, force bool) error {
	body := stateBody{State: state, Flag: flag, Force: force}
	return c.do(ctx, http.MethodPatch, "/State/Components/"+url.PathEscape(xname)+"/StateData", body, nil)
}

// BulkFlagOnly sets the Flag of ids.
func (c *Client) BulkFlagOnly(ctx context.Context, ids []string, flag string) error {
	body := struct {
		ComponentIDs []string `json:"ComponentIDs"`
		Flag         string   `json:"Flag"`
	}{ids, flag}
	return c.do(ctx, http.MethodPatch, "/State/Components/BulkFlagOnly", body, nil)
}

// BulkEnabled sets Enabled on ids.
func (c *Client) BulkEnabled(ctx context.Context, ids []string, enabled bool) error {
	body := struct {
		ComponentIDs []string `json:"ComponentIDs"`
		Enabled      bool     `json:"Enabled"`
	}{ids, enabled}
	return c.do(ctx, http.MethodPatch, "/State/Components/BulkEnabled", body, nil)
}

// BulkSoftwareStatus sets SoftwareStatus on ids.
func (c *Client) BulkSoftwareStatus(ctx context.Context, ids []string, status string) error {
	body := struct {
		ComponentIDs   []string `json:"ComponentIDs"`
		SoftwareStatus string   `json:"SoftwareStatus"`
	}{ids, status}
	return c.do(ctx, http.MethodPatch, "/State/Components/BulkSoftwareStatus", body, nil)
}

// BulkRole sets Role and SubRole on ids.
func (c *Client) BulkRole(ctx context.Context, ids []string, role, subRole string) error {
	body := struct {
		ComponentIDs []string `json:"ComponentIDs"`
		Role         string   `json:"Role"`
		SubRole      string   `json:"SubRole"`
	}{ids, role, subRole}
	return c.do(ctx, http.MethodPatch, "/State/Components/BulkRole", body, nil)
}

// PutComponent creates or updates one component (PUT); with force it
// overwrites the state fields of an existing one.
func (c *Client) PutComponent(ctx context.Context, comp hsm.Component, force bool) error {
	return c.do(ctx, http.MethodPut, "/State/Components/"+url.PathEscape(comp.ID),
		map[string]any{"Component": comp, "Force": force}, nil)
}

// DeleteComponent deletes one component.
func (c *Client) DeleteComponent(ctx context.Context, xname string) error {
	return c.do(ctx, http.MethodDelete, "/State/Components/"+url.PathEscape(xname), nil, nil)
}
