// Package client is the typed client of the Boot Script Service (BSS), for
// the daemons and tools that set or read boot parameters. It links only the
// wire types of ipxe/bss, never the server.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/hmsuite/hms/internal/httpclient"
	"github.com/hmsuite/hms/ipxe/bss"
)

// Client is a typed client of the BSS API (/boot/v1), for the CLI and the
// tools that set or read boot parameters. It speaks only HTTP: it links no
// store.
type Client struct {
	hc *httpclient.Client
}

// New returns a client of the BSS at base (such as
// http://127.0.0.1:27778; /boot/v1 is appended, and a base already ending in
// it is accepted). hc nil means http.DefaultClient.
func New(base string, hc *http.Client) *Client {
	base = strings.TrimSuffix(strings.TrimRight(base, "/"), bss.Base)
	return &Client{hc: httpclient.New("bss", base, bss.Base, hc)}
}

// bss.BootParams returns the boot parameters BSS would use for each name, MAC or
// NID of q: an entry of its own, else (for a node HSM knows) the one it
// boots by MAC, NID, role or Default. Nothing found is a
// problem.ErrNotFound error.
func (c *Client) BootParams(ctx context.Context, q bss.ParamsQuery) ([]bss.BootParams, error) {
	v := url.Values{}
	if len(q.Names) > 0 {
		v.Set("name", strings.Join(q.Names, ","))
	}
	if len(q.MACs) > 0 {
		v.Set("mac", strings.Join(q.MACs, ","))
	}
	for _, n := range q.NIDs {
		v.Add("nid", strconv.FormatInt(int64(n), 10))
	}
	var out []bss.BootParams
	err := c.hc.Do(ctx, http.MethodGet, "/bootparameters?"+v.Encode(), nil, &out)
	return out, err
}

// AllBootParams returns every record: kernel and initrd images, then one per
// host, MAC, NID or tag.
func (c *Client) AllBootParams(ctx context.Context) ([]bss.BootParams, error) {
	var out []bss.BootParams
	err := c.hc.Do(ctx, http.MethodGet, "/bootparameters", nil, &out)
	return out, err
}

// PutBootParams creates or replaces the entries bp names.
func (c *Client) PutBootParams(ctx context.Context, bp bss.BootParams) error {
	return c.hc.Do(ctx, http.MethodPut, "/bootparameters", bp, nil)
}

// PutBootParamsToken is PutBootParams that returns the referral token BSS
// issued for the request ("" for an image-only one): BOS puts it in a
// component's desired state and compares it with the one the node booted.
func (c *Client) PutBootParamsToken(ctx context.Context, bp bss.BootParams) (string, error) {
	b, err := json.Marshal(bp)
	if err != nil {
		return "", fmt.Errorf("bss PUT /bootparameters: encode: %w", err)
	}
	h, err := c.hc.DoHeader(ctx, http.MethodPut, "/bootparameters", bytes.NewReader(b), "application/json", nil)
	if err != nil {
		return "", err
	}
	return h.Get(bss.TokenHeader), nil
}

// DeleteBootParams deletes the entries bp names.
func (c *Client) DeleteBootParams(ctx context.Context, bp bss.BootParams) error {
	return c.hc.Do(ctx, http.MethodDelete, "/bootparameters", bp, nil)
}

// EndpointHistory returns when name last fetched each boot endpoint
// (bootscript, user-data); name "" means every node.
func (c *Client) EndpointHistory(ctx context.Context, name string) ([]bss.EndpointAccess, error) {
	var out []bss.EndpointAccess
	p := "/endpoint-history"
	if name != "" {
		p += "?name=" + url.QueryEscape(name)
	}
	err := c.hc.Do(ctx, http.MethodGet, p, nil, &out)
	return out, err
}

// Leases returns the DHCP server's leases that q matches, sorted by
// address (GET /dhcp/leases, an extension of the hms-bss API). A bss that
// runs no DHCP server answers a problem.ErrNotFound error.
func (c *Client) Leases(ctx context.Context, q bss.LeaseQuery) ([]bss.DHCPLease, error) {
	v := url.Values{}
	for k, vals := range map[string][]string{"mac": q.MACs, "ip": q.IPs, "name": q.Names, "state": q.States} {
		if len(vals) > 0 {
			v.Set(k, strings.Join(vals, ","))
		}
	}
	p := "/dhcp/leases"
	if len(v) > 0 {
		p += "?" + v.Encode()
	}
	var out []bss.DHCPLease
	err := c.hc.Do(ctx, http.MethodGet, p, nil, &out)
	return out, err
}

// Ready reports whether BSS runs and reaches its store
// (GET /service/status/etcd: BSS has no readiness route of its own).
func (c *Client) Ready(ctx context.Context) error {
	return c.hc.Do(ctx, http.MethodGet, "/service/status/etcd", nil, nil)
}
