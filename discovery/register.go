package discovery

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// HSM is what discovery asks of HSM (statemgr/client.Client).
type HSM interface {
	EthernetInterfaces(ctx context.Context, query url.Values) ([]hsm.EthernetInterface, error)
	CreateEthernetInterface(ctx context.Context, ei hsm.EthernetInterface) error
	PatchEthernetInterface(ctx context.Context, id string, p hsm.EthernetPatch) (hsm.EthernetInterface, error)
	RedfishEndpoints(ctx context.Context, query url.Values) ([]hsm.RedfishEndpoint, error)
	CreateRedfishEndpoints(ctx context.Context, eps ...hsm.RedfishEndpoint) error
	PatchRedfishEndpoint(ctx context.Context, xname string, p hsm.RedfishEndpointPatch) (hsm.RedfishEndpoint, error)
	ComponentsUnder(ctx context.Context, xname string, query url.Values) ([]hsm.Component, error)
	BulkStateData(ctx context.Context, ids []string, state, flag string, force bool, info *hsm.ExtendedInfo) error
	BulkFlagOnly(ctx context.Context, ids []string, flag string) error
}

// ethID is HSM's ID of the Ethernet interface of mac: hex digits, no separators.
func ethID(mac string) string { return strings.ReplaceAll(strings.ToLower(mac), ":", "") }

// pointInterface makes HSM's Ethernet interface of mac belong to xname,
// creating it (with ip) when DHCP's server did not.
func pointInterface(ctx context.Context, h HSM, mac, ip, xname string) error {
	_, err := h.PatchEthernetInterface(ctx, ethID(mac), hsm.EthernetPatch{ComponentID: &xname})
	if !errors.Is(err, problem.ErrNotFound) {
		if err != nil {
			return fmt.Errorf("hsm: point interface %s at %s: %w", mac, xname, err)
		}
		return nil
	}
	ei := hsm.EthernetInterface{MACAddress: mac, ComponentID: xname, IPAddresses: []hsm.IPAddressMapping{}}
	if ip != "" {
		ei.IPAddresses = append(ei.IPAddresses, hsm.IPAddressMapping{IPAddress: ip})
	}
	err = h.CreateEthernetInterface(ctx, ei)
	if errors.Is(err, problem.ErrConflict) {
		// DHCP's server wrote it (unnamed) between our PATCH and POST:
		// point it now, or it stays unnamed.
		_, err = h.PatchEthernetInterface(ctx, ethID(mac), hsm.EthernetPatch{ComponentID: &xname})
	}
	if err != nil {
		return fmt.Errorf("hsm: create interface %s of %s: %w", mac, xname, err)
	}
	return nil
}

// endpointOf is the RedfishEndpoint of e, with RediscoverOnUpdate so HSM
// walks it at once.
func endpointOf(e Endpoint) hsm.RedfishEndpoint {
	return hsm.RedfishEndpoint{ID: e.Xname, FQDN: e.Addr, IPAddress: e.IP, MACAddr: e.MAC,
		User: e.User, Password: e.Password, RediscoverOnUpdate: true}
}

// registerEndpoint POSTs the RedfishEndpoint of e (PATCH on 409).
func registerEndpoint(ctx context.Context, h HSM, e Endpoint) error {
	ep := endpointOf(e)
	err := h.CreateRedfishEndpoints(ctx, ep)
	if errors.Is(err, problem.ErrConflict) {
		on, yes := true, true
		_, err = h.PatchRedfishEndpoint(ctx, e.Xname, hsm.RedfishEndpointPatch{Enabled: &on, FQDN: &ep.FQDN,
			IPAddress: &ep.IPAddress, MACAddr: &ep.MACAddr, User: &ep.User, Password: &ep.Password, RediscoverOnUpdate: &yes})
	}
	if err != nil {
		return fmtRegister(e.Xname, err)
	}
	return nil
}

// fmtRegister wraps a failed registration of xname ("" for a batch).
func fmtRegister(xname string, err error) error {
	if xname == "" {
		return fmt.Errorf("hsm: register a batch of endpoints: %w", err)
	}
	return fmt.Errorf("hsm: register %s: %w", xname, err)
}

// retire disables the RedfishEndpoint of xname and marks the BMC and every
// component under it Empty (HSM emits the SCNs).
func retire(ctx context.Context, h HSM, xname string) error {
	off := false
	if _, err := h.PatchRedfishEndpoint(ctx, xname, hsm.RedfishEndpointPatch{Enabled: &off}); err != nil && !errors.Is(err, problem.ErrNotFound) {
		return fmt.Errorf("hsm: disable %s: %w", xname, err)
	}
	ids, err := below(ctx, h, xname)
	if err != nil || len(ids) == 0 {
		return err
	}
	if err := h.BulkStateData(ctx, ids, hsm.StateEmpty, "OK", true, nil); err != nil {
		return fmt.Errorf("hsm: mark %s Empty: %w", xname, err)
	}
	return nil
}

// below lists xname and the components HSM has under it (one query of
// that subtree, not a listing of every component).
func below(ctx context.Context, h HSM, xname string) ([]string, error) {
	comps, err := h.ComponentsUnder(ctx, xname, nil)
	if err != nil {
		return nil, fmt.Errorf("hsm: components under %s: %w", xname, err)
	}
	ids := make([]string, len(comps))
	for i, c := range comps {
		ids[i] = c.ID
	}
	return ids, nil
}
