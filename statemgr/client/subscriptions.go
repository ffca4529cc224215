package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// subscriptionWire decodes a subscription whose ID may be a number.
type subscriptionWire struct {
	hsm.Subscription
	ID flexID `json:"ID"`
}

func (s subscriptionWire) sub() hsm.Subscription {
	out := s.Subscription
	out.ID = string(s.ID)
	return out
}

// Subscriptions returns every SCN subscription.
func (c *Client) Subscriptions(ctx context.Context) ([]hsm.Subscription, error) {
	var list struct {
		SubscriptionList []subscriptionWire `json:"SubscriptionList"`
	}
	if err := c.do(ctx, http.MethodGet, "/Subscriptions/SCN", nil, &list); err != nil {
		return nil, err
	}
	out := make([]hsm.Subscription, 0, len(list.SubscriptionList))
	for _, s := range list.SubscriptionList {
		out = append(out, s.sub())
	}
	return out, nil
}

// Subscription returns one SCN subscription.
func (c *Client) Subscription(ctx context.Context, id string) (hsm.Subscription, error) {
	var out subscriptionWire
	err := c.do(ctx, http.MethodGet, "/Subscriptions/SCN/"+url.PathEscape(id), nil, &out)
	return out.sub(), err
}

// Subscribe creates an SCN subscription and returns it with its ID. HSM
// answers problem.ErrConflict when the subscriber already has one to the
// same Url.
func (c *Client) Subscribe(ctx context.Context, sub hsm.Subscription) (hsm.Subscription, error) {
	var out subscriptionWire
	err := c.do(ctx, http.MethodPost, "/Subscriptions/SCN", sub, &out)
	return out.sub(), err
}

// PatchSubscription changes the lists of a subscription (Op "add",
// "remove" or "replace").
func (c *Client) PatchSubscription(ctx context.Context, id string, p hsm.SubscriptionPatch) error {
	return c.do(ctx, http.MethodPatch, "/Subscriptions/SCN/"+url.PathEscape(id), p, nil)
}

// Unsubscribe deletes an SCN subscription.
func (c *Client) Unsubscribe(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/Subscriptions/SCN/"+url.PathEscape(id), nil, nil)
}
