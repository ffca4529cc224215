package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// ComponentHistory returns the State and Flag changes HSM recorded (the
// suite's extension GET /State/Components/History), by component; query
// holds its filters (id, state, starttime, endtime, limit), nil for all. A
// shipped HSM has no such route: it answers problem.ErrNotFound.
func (c *Client) ComponentHistory(ctx context.Context, query url.Values) (hsm.StateHistoryList, error) {
	var out hsm.StateHistoryList
	err := c.do(ctx, http.MethodGet, withQuery("/State/Components/History", query), nil, &out)
	return out, err
}

// ComponentHistoryOf returns the State and Flag changes of one component,
// oldest first (GET /State/Components/History/{xname}); query holds the
// filters (state, starttime, endtime, limit), nil for none. A component
// without changes has an empty History; a shipped HSM answers
// problem.ErrNotFound.
func (c *Client) ComponentHistoryOf(ctx context.Context, xname string, query url.Values) (hsm.StateHistory, error) {
	var out hsm.StateHistory
	err := c.do(ctx, http.MethodGet, withQuery("/State/Components/History/"+url.PathEscape(xname), query), nil, &out)
	return out, err
}
