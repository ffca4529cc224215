// Package client is the typed client of the nodes daemon, for `hms apply`
// and tests. It links only the wire types of nodes/wire.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/hmsuite/hms/internal/httpclient"
	"github.com/hmsuite/hms/nodes/wire"
)

// Base is the nodes API's path prefix.
const Base = "/nodes/v1"

// Client talks to one nodes daemon.
type Client struct {
	hc *httpclient.Client
}

// New returns a client of the nodes daemon at base (e.g.
// http://127.0.0.1:27780; a trailing /nodes/v1 is accepted). hc may be nil.
func New(base string, hc *http.Client, userAgent string) *Client {
	return &Client{hc: httpclient.NewDaemon("nodes", base, Base, hc, userAgent)}
}

// Apply sends a set; the plan says what changed (or would, for a dry run).
// An invalid set is a problem.ErrInvalid error naming the resources.
func (c *Client) Apply(ctx context.Context, req wire.ApplyRequest) (wire.Plan, error) {
	var out wire.Plan
	err := c.hc.Do(ctx, http.MethodPost, "/apply", req, &out)
	return out, err
}

// Filter selects the resources a List returns; empty fields match all.
type Filter struct {
	Xnames, Groups, Names []string
	Arch, MAC             string
}

func (f Filter) query() string {
	v := url.Values{}
	for k, vals := range map[string][]string{"xname": f.Xnames, "group": f.Groups, "name": f.Names} {
		if len(vals) > 0 {
			v.Set(k, strings.Join(vals, ","))
		}
	}
	if f.Arch != "" {
		v.Set("arch", f.Arch)
	}
	if f.MAC != "" {
		v.Set("mac", f.MAC)
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// ComputeNodes lists the nodes matching f.
func (c *Client) ComputeNodes(ctx context.Context, f Filter) ([]wire.ComputeNode, error) {
	var out []wire.ComputeNode
	err := c.hc.Do(ctx, http.MethodGet, "/computenodes"+f.query(), nil, &out)
	return out, err
}

// ComputeNode returns one node with what the services observe of it, and
// its ETag.
func (c *Client) ComputeNode(ctx context.Context, xname string) (wire.ComputeNode, string, error) {
	var out wire.ComputeNode
	etag, err := c.get(ctx, "/computenodes/"+url.PathEscape(xname), &out)
	return out, etag, err
}

// PutComputeNode creates or replaces a node; ifMatch, when not empty, must
// be its current ETag (a mismatch is an error of status 412).
func (c *Client) PutComputeNode(ctx context.Context, n wire.ComputeNode, ifMatch string) (wire.ComputeNode, string, error) {
	var out wire.ComputeNode
	etag, err := c.put(ctx, "/computenodes/"+url.PathEscape(n.Xname), n, ifMatch, &out)
	return out, etag, err
}

// DeleteComputeNode removes a node and what it wrote to the services.
func (c *Client) DeleteComputeNode(ctx context.Context, xname, ifMatch string) error {
	return c.del(ctx, "/computenodes/"+url.PathEscape(xname), ifMatch)
}

// BootProfiles lists the profiles (Filter.Names selects).
func (c *Client) BootProfiles(ctx context.Context, f Filter) ([]wire.BootProfile, error) {
	var out []wire.BootProfile
	err := c.hc.Do(ctx, http.MethodGet, "/bootprofiles"+f.query(), nil, &out)
	return out, err
}

// BootProfile returns one profile and its ETag.
func (c *Client) BootProfile(ctx context.Context, name string) (wire.BootProfile, string, error) {
	var out wire.BootProfile
	etag, err := c.get(ctx, "/bootprofiles/"+url.PathEscape(name), &out)
	return out, etag, err
}

// PutBootProfile creates or replaces a profile (ifMatch as for nodes).
func (c *Client) PutBootProfile(ctx context.Context, p wire.BootProfile, ifMatch string) (wire.BootProfile, string, error) {
	var out wire.BootProfile
	etag, err := c.put(ctx, "/bootprofiles/"+url.PathEscape(p.Name), p, ifMatch, &out)
	return out, etag, err
}

// DeleteBootProfile removes a profile no node uses.
func (c *Client) DeleteBootProfile(ctx context.Context, name, ifMatch string) error {
	return c.del(ctx, "/bootprofiles/"+url.PathEscape(name), ifMatch)
}

// NodeGroups lists the groups (Filter.Names selects).
func (c *Client) NodeGroups(ctx context.Context, f Filter) ([]wire.NodeGroup, error) {
	var out []wire.NodeGroup
	err := c.hc.Do(ctx, http.MethodGet, "/nodegroups"+f.query(), nil, &out)
	return out, err
}

// NodeGroup returns one group and its ETag.
func (c *Client) NodeGroup(ctx context.Context, name string) (wire.NodeGroup, string, error) {
	var out wire.NodeGroup
	etag, err := c.get(ctx, "/nodegroups/"+url.PathEscape(name), &out)
	return out, etag, err
}

// PutNodeGroup creates or replaces a group (ifMatch as for nodes).
func (c *Client) PutNodeGroup(ctx context.Context, g wire.NodeGroup, ifMatch string) (wire.NodeGroup, string, error) {
	var out wire.NodeGroup
	etag, err := c.put(ctx, "/nodegroups/"+url.PathEscape(g.Name), g, ifMatch, &out)
	return out, etag, err
}

// DeleteNodeGroup removes a group.
func (c *Client) DeleteNodeGroup(ctx context.Context, name, ifMatch string) error {
	return c.del(ctx, "/nodegroups/"+url.PathEscape(name), ifMatch)
}

func (c *Client) get(ctx context.Context, path string, out any) (string, error) {
	h, err := c.hc.DoHeader(ctx, http.MethodGet, path, nil, "", out)
	return h.Get("ETag"), err
}

func (c *Client) put(ctx context.Context, path string, in any, ifMatch string, out any) (string, error) {
	hc := c.withIfMatch(ifMatch)
	h, err := hc.DoHeader(ctx, http.MethodPut, path, jsonBody(in), "application/json", out)
	if h == nil {
		return "", err
	}
	return h.Get("ETag"), err
}

func (c *Client) del(ctx context.Context, path, ifMatch string) error {
	return c.withIfMatch(ifMatch).Do(ctx, http.MethodDelete, path, nil, nil)
}

// withIfMatch returns a copy of the client whose requests carry If-Match
// (httpclient sets no request headers of its own).
func (c *Client) withIfMatch(ifMatch string) *httpclient.Client {
	cp := *c.hc
	if ifMatch == "" {
		return &cp
	}
	base := http.DefaultClient
	if cp.HTTP != nil {
		base = cp.HTTP
	}
	hc := *base
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	hc.Transport = headerTransport{rt: rt, key: "If-Match", value: ifMatch}
	cp.HTTP = &hc
	return &cp
}

type headerTransport struct {
	rt         http.RoundTripper
	key, value string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(t.key, t.value)
	return t.rt.RoundTrip(r)
}

func jsonBody(v any) io.Reader {
	b, err := json.Marshal(v)
	if err != nil {
		return errReader{err}
	}
	return bytes.NewReader(b)
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
