package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// EthernetInterfaces lists interfaces; query holds the filters (MACAddress,
// ComponentID, ...), nil for all.
func (c *Client) EthernetInterfaces(ctx context.Context, query url.Values) ([]hsm.EthernetInterface, error) {
	var out []hsm.EthernetInterface
	err := c.do(ctx, http.MethodGet, withQuery("/Inventory/EthernetInterfaces", query), nil, &out)
	return out, err
}

// EthernetInterface returns one interface by ID or MAC address.
func (c *Client) EthernetInterface(ctx context.Context, id string) (hsm.EthernetInterface, error) {
	var out hsm.EthernetInterface
	err := c.do(ctx, http.MethodGet, "/Inventory/EthernetInterfaces/"+url.PathEscape(id), nil, &out)
	return out, err
}

// CreateEthernetInterfaces creates every interface of eis in one request
// and one transaction, all or nothing: the suite's extension POST
// /Inventory/EthernetInterfaces/Bulk (a shipped HSM answers it 404 or 405).
func (c *Client) CreateEthernetInterfaces(ctx context.Context, eis []hsm.EthernetInterface) error {
	return c.do(ctx, http.MethodPost, "/Inventory/EthernetInterfaces/Bulk", eis, nil)
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

// RedfishEndpoints lists Redfish endpoints; query holds the filters (id,
// type, fqdn, ...), nil for all. Passwords are never returned.
func (c *Client) RedfishEndpoints(ctx context.Context, query url.Values) ([]hsm.RedfishEndpoint, error) {
	var out hsm.RedfishEndpointList
	err := c.do(ctx, http.MethodGet, withQuery("/Inventory/RedfishEndpoints", query), nil, &out)
	return out.RedfishEndpoints, err
}

// BMCCredentials returns the stored logins of the Redfish endpoints query
// selects (id=X, ...; nil: all), from HSM's service-only route; it needs an
// admin token.
func (c *Client) BMCCredentials(ctx context.Context, query url.Values) ([]hsm.BMCCredential, error) {
	var out hsm.BMCCredentialList
	err := c.do(ctx, http.MethodGet, withQuery("/Inventory/RedfishEndpointCredentials", query), nil, &out)
	return out.Credentials, err
}

// RedfishEndpoint returns one Redfish endpoint by xname.
func (c *Client) RedfishEndpoint(ctx context.Context, xname string) (hsm.RedfishEndpoint, error) {
	var out hsm.RedfishEndpoint
	err := c.do(ctx, http.MethodGet, "/Inventory/RedfishEndpoints/"+url.PathEscape(xname), nil, &out)
	return out, err
}

// CreateRedfishEndpoints creates endpoints (HSM then discovers them); an
// existing xname is problem.ErrConflict and creates none.
func (c *Client) CreateRedfishEndpoints(ctx context.Context, eps ...hsm.RedfishEndpoint) error {
	return c.do(ctx, http.MethodPost, "/Inventory/RedfishEndpoints", hsm.RedfishEndpointList{RedfishEndpoints: eps}, nil)
}

// PatchRedfishEndpoint updates one endpoint and returns the result.
func (c *Client) PatchRedfishEndpoint(ctx context.Context, xname string, p hsm.RedfishEndpointPatch) (hsm.RedfishEndpoint, error) {
	var out hsm.RedfishEndpoint
	err := c.do(ctx, http.MethodPatch, "/Inventory/RedfishEndpoints/"+url.PathEscape(xname), p, &out)
	return out, err
}

// DeleteRedfishEndpoint deletes one endpoint.
func (c *Client) DeleteRedfishEndpoint(ctx context.Context, xname string) error {
	return c.do(ctx, http.MethodDelete, "/Inventory/RedfishEndpoints/"+url.PathEscape(xname), nil, nil)
}
