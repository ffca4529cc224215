package client

import (
	"context"
	"net/http"
	"strconv"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// Subscriptions returns every SCN subscription.
func (c *Client) Subscriptions(ctx context.Context) ([]hsm.Subscription, error) {
	var list hsm.SubscriptionList
	err := c.do(ctx, http.MethodGet, "/Subscriptions/SCN", nil, &list)
	return list.SubscriptionList, err
}

// Subscription returns one SCN subscription.
func (c *Client) Subscription(ctx context.Context, id int64) (hsm.Subscription, error) {
	var out hsm.Subscription
	err := c.do(ctx, http.MethodGet, subPath(id), nil, &out)
	return out, err
}

// Subscribe creates an SCN subscription and returns it with its ID. HSM
// answers problem.ErrConflict when the subscriber already has one to the
// same Url.
func (c *Client) Subscribe(ctx context.Context, sub hsm.Subscription) (hsm.Subscription, error) {
	var out hsm.Subscription
	err := c.do(ctx, http.MethodPost, "/Subscriptions/SCN", sub, &out)
	return out, err
}

// PatchSubscription changes the lists of a subscription (Op "add",
// "remove" or "replace"; a nil list is left alone).
func (c *Client) PatchSubscription(ctx context.Context, id int64, p hsm.SubscriptionPatch) error {
	return c.do(ctx, http.MethodPatch, subPath(id), p, nil)
}

// Unsubscribe deletes an SCN subscription.
func (c *Client) Unsubscribe(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodDelete, subPath(id), nil, nil)
}

func subPath(id int64) string { return "/Subscriptions/SCN/" + strconv.FormatInt(id, 10) }
