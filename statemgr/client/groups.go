package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// Groups returns HSM's groups with their members; query holds the GET
// filters (group: labels, tag), nil for all.
func (c *Client) Groups(ctx context.Context, query url.Values) ([]hsm.Group, error) {
	var out []hsm.Group
	err := c.do(ctx, http.MethodGet, withQuery("/groups", query), nil, &out)
	return out, err
}

// CreateGroup creates a group with its members (an existing label is
// problem.ErrConflict).
func (c *Client) CreateGroup(ctx context.Context, g hsm.Group) error {
	return c.do(ctx, http.MethodPost, "/groups", g, nil)
}

// DeleteGroup deletes a group (not its members).
func (c *Client) DeleteGroup(ctx context.Context, label string) error {
	return c.do(ctx, http.MethodDelete, "/groups/"+url.PathEscape(label), nil, nil)
}

// PatchGroup changes a group's description or tags.
func (c *Client) PatchGroup(ctx context.Context, label string, p hsm.GroupPatch) error {
	return c.do(ctx, http.MethodPatch, "/groups/"+url.PathEscape(label), p, nil)
}

// AddGroupMember adds one component to a group.
func (c *Client) AddGroupMember(ctx context.Context, label, id string) error {
	return c.do(ctx, http.MethodPost, "/groups/"+url.PathEscape(label)+"/members", hsm.MemberID{ID: id}, nil)
}

// RemoveGroupMember removes one component from a group.
func (c *Client) RemoveGroupMember(ctx context.Context, label, id string) error {
	return c.do(ctx, http.MethodDelete, "/groups/"+url.PathEscape(label)+"/members/"+url.PathEscape(id), nil, nil)
}
