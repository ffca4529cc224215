// Package client is the typed client of the System Layout Service (SLS),
// for the daemons and tools that read or write the intended layout. It
// links only the wire types of layout/sls, never the server.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"

	"github.com/hmsuite/hms/internal/httpclient"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/layout/sls"
)

// Client is a typed client of the SLS API, for the daemons and tools that read
// the intended layout (HSM for NIDs and roles, discovery for switch cabling).
type Client struct {
	hc *httpclient.Client
}

// New returns a client of the SLS at baseURL, such as
// http://127.0.0.1:8376 (the client adds /v1). hc nil means http.DefaultClient.
func New(baseURL string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{hc: httpclient.New("sls", baseURL, sls.Base, hc)}
}

// GetHardware returns the object x; a missing one is an ErrNotFound error.
func (c *Client) GetHardware(ctx context.Context, x string) (sls.Hardware, error) {
	var h sls.Hardware
	err := c.do(ctx, http.MethodGet, "/hardware/"+url.PathEscape(x), nil, "", &h)
	return h, err
}

// ListHardware returns every object.
func (c *Client) ListHardware(ctx context.Context) ([]sls.Hardware, error) {
	var hs []sls.Hardware
	err := c.do(ctx, http.MethodGet, "/hardware", nil, "", &hs)
	return hs, err
}

// SearchHardware returns the objects matching s; none is an empty result, not
// an error.
func (c *Client) SearchHardware(ctx context.Context, s sls.HardwareSearch) ([]sls.Hardware, error) {
	var hs []sls.Hardware
	err := c.do(ctx, http.MethodGet, "/search/hardware?"+s.Values().Encode(), nil, "", &hs)
	if problem.Status(err) == http.StatusNotFound {
		return nil, nil
	}
	return hs, err
}

// PutHardware creates or replaces h.Xname and returns the stored object.
func (c *Client) PutHardware(ctx context.Context, h sls.Hardware) (sls.Hardware, error) {
	var out sls.Hardware
	err := c.doJSON(ctx, http.MethodPut, "/hardware/"+url.PathEscape(h.Xname), h, &out)
	return out, err
}

// PutHardwareAll creates or replaces every object of hs in one request
// and one transaction, all or nothing: the suite's extension PUT
// /v1/bulk/hardware (a shipped SLS answers it 404 or 405).
func (c *Client) PutHardwareAll(ctx context.Context, hs []sls.Hardware) error {
	return c.doJSON(ctx, http.MethodPut, "/bulk/hardware", hs, nil)
}

// CreateHardware creates h.Xname; an existing one is an ErrConflict error.
func (c *Client) CreateHardware(ctx context.Context, h sls.Hardware) (sls.Hardware, error) {
	var out sls.Hardware
	err := c.doJSON(ctx, http.MethodPost, "/hardware", h, &out)
	return out, err
}

// DeleteHardware deletes x and everything below it.
func (c *Client) DeleteHardware(ctx context.Context, x string) error {
	return c.do(ctx, http.MethodDelete, "/hardware/"+url.PathEscape(x), nil, "", nil)
}

// Networks returns every network.
func (c *Client) Networks(ctx context.Context) ([]sls.Network, error) {
	var ns []sls.Network
	err := c.do(ctx, http.MethodGet, "/networks", nil, "", &ns)
	return ns, err
}

// GetNetwork returns the network called name.
func (c *Client) GetNetwork(ctx context.Context, name string) (sls.Network, error) {
	var n sls.Network
	err := c.do(ctx, http.MethodGet, "/networks/"+url.PathEscape(name), nil, "", &n)
	return n, err
}

// PutNetwork creates or replaces n and returns the stored network.
func (c *Client) PutNetwork(ctx context.Context, n sls.Network) (sls.Network, error) {
	var out sls.Network
	err := c.doJSON(ctx, http.MethodPut, "/networks/"+url.PathEscape(n.Name), n, &out)
	return out, err
}

// DeleteNetwork deletes the network called name.
func (c *Client) DeleteNetwork(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/networks/"+url.PathEscape(name), nil, "", nil)
}

// SearchNetworks returns the networks matching q (parameters name, full_name,
// type, ip_address, extra_properties.<Field>); none is an empty result.
func (c *Client) SearchNetworks(ctx context.Context, q url.Values) ([]sls.Network, error) {
	var ns []sls.Network
	err := c.do(ctx, http.MethodGet, "/search/networks?"+q.Encode(), nil, "", &ns)
	if problem.Status(err) == http.StatusNotFound {
		return nil, nil
	}
	return ns, err
}

// Version returns the change counter; poll it to notice changes cheaply.
func (c *Client) Version(ctx context.Context) (sls.Version, error) {
	var v sls.Version
	err := c.do(ctx, http.MethodGet, "/version", nil, "", &v)
	return v, err
}

// Dump returns the whole state.
func (c *Client) Dump(ctx context.Context) (sls.Dump, error) {
	var d sls.Dump
	err := c.do(ctx, http.MethodGet, "/dumpstate", nil, "", &d)
	return d, err
}

// Load replaces the whole state with the dump read from r, streamed as the
// multipart field sls_dump.
func (c *Client) Load(ctx context.Context, r io.Reader) error {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	// The goroutine ends when the copy is done or when the transport closes
	// pr, which makes the next write fail.
	go func() {
		fw, err := mw.CreateFormFile("sls_dump", "sls_dump.json")
		if err == nil {
			_, err = io.Copy(fw, r)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	err := c.do(ctx, http.MethodPost, "/loadstate", pr, mw.FormDataContentType(), nil)
	pr.Close()
	return err
}

func (c *Client) doJSON(ctx context.Context, method, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("sls %s %s: %w", method, path, err)
	}
	return c.do(ctx, method, path, bytes.NewReader(b), "application/json", out)
}

// do sends one request and decodes a 2xx JSON answer into out (if not nil);
// other answers become errors of the kind matching the status.
func (c *Client) do(ctx context.Context, method, path string, body io.Reader, ctype string, out any) error {
	return c.hc.DoBody(ctx, method, path, body, ctype, out)
}
