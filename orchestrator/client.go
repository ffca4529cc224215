package orchestrator

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hmsuite/hms/internal/httpclient"
)

// Client is the typed client of bos (the hms CLI's `hms bos`).
type Client struct {
	hc *httpclient.Client
}

// NewClient returns a client of the bos at base (e.g.
// http://127.0.0.1:9000; a trailing /v2 is accepted). hc may be nil.
func NewClient(base string, hc *http.Client, userAgent string) *Client {
	return &Client{hc: httpclient.NewDaemon("bos", base, Base, hc, userAgent)}
}

// Templates lists the session templates.
func (c *Client) Templates(ctx context.Context) ([]Template, error) {
	var out []Template
	return out, c.hc.Do(ctx, http.MethodGet, "/sessiontemplates", nil, &out)
}

// Template returns one session template.
func (c *Client) Template(ctx context.Context, name string) (Template, error) {
	var out Template
	return out, c.hc.Do(ctx, http.MethodGet, "/sessiontemplates/"+url.PathEscape(name), nil, &out)
}

// PutTemplate creates or replaces a session template (t.Name names it).
func (c *Client) PutTemplate(ctx context.Context, t Template) (Template, error) {
	var out Template
	return out, c.hc.Do(ctx, http.MethodPut, "/sessiontemplates/"+url.PathEscape(t.Name), t, &out)
}

// DeleteTemplate deletes a session template.
func (c *Client) DeleteTemplate(ctx context.Context, name string) error {
	return c.hc.Do(ctx, http.MethodDelete, "/sessiontemplates/"+url.PathEscape(name), nil, nil)
}

// Sessions lists the sessions; status filters them when not empty.
func (c *Client) Sessions(ctx context.Context, status string) ([]Session, error) {
	path := "/sessions"
	if status != "" {
		path += "?" + url.Values{"status": {status}}.Encode()
	}
	var out []Session
	return out, c.hc.Do(ctx, http.MethodGet, path, nil, &out)
}

// Session returns one session.
func (c *Client) Session(ctx context.Context, name string) (Session, error) {
	var out Session
	return out, c.hc.Do(ctx, http.MethodGet, "/sessions/"+url.PathEscape(name), nil, &out)
}

// CreateSession starts a session.
func (c *Client) CreateSession(ctx context.Context, req SessionCreate) (Session, error) {
	var out Session
	return out, c.hc.Do(ctx, http.MethodPost, "/sessions", req, &out)
}

// SessionStatus returns a session's extended status.
func (c *Client) SessionStatus(ctx context.Context, name string) (ExtendedStatus, error) {
	var out ExtendedStatus
	return out, c.hc.Do(ctx, http.MethodGet, "/sessions/"+url.PathEscape(name)+"/status", nil, &out)
}

// DeleteSession deletes one session.
func (c *Client) DeleteSession(ctx context.Context, name string) error {
	return c.hc.Do(ctx, http.MethodDelete, "/sessions/"+url.PathEscape(name), nil, nil)
}

// Components lists components; query takes GET /v2/components's filters
// (ids, session, enabled, phase, status, ...).
func (c *Client) Components(ctx context.Context, query url.Values) ([]Component, error) {
	path := "/components"
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	var out []Component
	return out, c.hc.Do(ctx, http.MethodGet, path, nil, &out)
}

// Component returns one component.
func (c *Client) Component(ctx context.Context, id string) (Component, error) {
	var out Component
	return out, c.hc.Do(ctx, http.MethodGet, "/components/"+url.PathEscape(id), nil, &out)
}

// ApplyStaged starts the staged sessions of the named nodes.
func (c *Client) ApplyStaged(ctx context.Context, xnames []string) (ApplyStagedResult, error) {
	var out ApplyStagedResult
	return out, c.hc.Do(ctx, http.MethodPost, "/applystaged", map[string][]string{"xnames": xnames}, &out)
}
