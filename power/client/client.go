// Package client is the typed client of pcs (the Power Control Service),
// for the hms CLI and for daemons that power components (BOS). It links
// only the wire types of power/pcs.
package client

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/hmsuite/hms/internal/httpclient"
	"github.com/hmsuite/hms/internal/pause"
	"github.com/hmsuite/hms/power/pcs"
)

// Client talks to one pcs.
type Client struct {
	hc *httpclient.Client
}

// New returns a client of the pcs at base (e.g. http://127.0.0.1:28007;
// a trailing /v1 is accepted). hc may be nil.
func New(base string, hc *http.Client, userAgent string) *Client {
	return &Client{hc: httpclient.NewDaemon("pcs", base, "/v1", hc, userAgent)}
}

// StartTransition starts a transition; deadline 0 is PCS's default.
func (c *Client) StartTransition(ctx context.Context, op pcs.Operation, deadline int, locs []pcs.Location) (pcs.Created, error) {
	req := pcs.TransitionRequest{Operation: string(op), Location: locs}
	if deadline > 0 {
		req.Deadline = &deadline
	}
	var out pcs.Created
	err := c.hc.Do(ctx, http.MethodPost, "/transitions", req, &out)
	return out, err
}

// Transition returns one transition with its tasks.
func (c *Client) Transition(ctx context.Context, id string) (pcs.Transition, error) {
	var out pcs.Transition
	err := c.hc.Do(ctx, http.MethodGet, "/transitions/"+url.PathEscape(id), nil, &out)
	return out, err
}

// Transitions lists the transitions pcs keeps.
func (c *Client) Transitions(ctx context.Context) ([]pcs.Transition, error) {
	var out pcs.TransitionList
	err := c.hc.Do(ctx, http.MethodGet, "/transitions", nil, &out)
	return out.Transitions, err
}

// Abort signals a transition to stop.
func (c *Client) Abort(ctx context.Context, id string) error {
	return c.hc.Do(ctx, http.MethodDelete, "/transitions/"+url.PathEscape(id), nil, nil)
}

// Wait polls a transition every interval until it has ended or ctx ends.
func (c *Client) Wait(ctx context.Context, id string, interval time.Duration) (pcs.Transition, error) {
	for {
		tr, err := c.Transition(ctx, id)
		if err != nil || tr.Done() {
			return tr, err
		}
		if !pause.For(ctx, interval) {
			return tr, ctx.Err()
		}
	}
}

// PowerStatus reads power states from pcs's cache.
func (c *Client) PowerStatus(ctx context.Context, req pcs.PowerStatusRequest) ([]pcs.PowerStatus, error) {
	var out pcs.PowerStatusList
	err := c.hc.Do(ctx, http.MethodPost, "/power-status", req, &out)
	return out.Status, err
}
