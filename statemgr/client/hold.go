package client

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/redact"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// Subscriber is what Hold asks HSM: the values it knows, and the SCN
// subscriptions (*Client is one).
type Subscriber interface {
	Values(ctx context.Context) (hsm.Values, error)
	Subscriptions(ctx context.Context) ([]hsm.Subscription, error)
	Subscribe(ctx context.Context, sub hsm.Subscription) (hsm.Subscription, error)
	PatchSubscription(ctx context.Context, id int64, p hsm.SubscriptionPatch) error
	Unsubscribe(ctx context.Context, id int64) error
}

// DefaultHoldCheck is how often Hold asks HSM whether it still holds the
// subscription when HoldConfig.Check is not set.
const DefaultHoldCheck = time.Minute

// HoldConfig is the subscription Hold keeps and how.
type HoldConfig struct {
	// Build makes the subscription from the values HSM knows (HSM refuses
	// a filter naming a value it does not know). Its Subscriber should be
	// SubscriberName's.
	Build func(hsm.Values) hsm.Subscription
	// Check is how often HSM is asked whether it still holds the
	// subscription; 0 means DefaultHoldCheck.
	Check time.Duration
	// After is the clock of the checks and the retries (nil: time.After).
	After func(time.Duration) <-chan time.Time
	// Held, if set, is told true each time HSM comes to hold the
	// subscription and false when it is found gone (until it holds it again).
	Held func(bool)
	// Restored, if set, counts the subscriptions found gone or changed
	// and subscribed again.
	Restored prometheus.Counter
	// Regained, if set, is called (after Held) each time HSM holds the
	// subscription again as built after it was found gone or changed
	// since HSM first held it: SCNs HSM committed in between were not
	// all sent to the holder, which catches up on what it learns from
	// them (bss reads HSM again). It runs on Hold's goroutine, before the
	// next check.
	Regained func(context.Context)
	// Log gets hsm_subscribed, hsm_subscription_restored (WARN) and the
	// failures.
	Log *slog.Logger
}

// Hold has HSM hold an SCN subscription until ctx ends. It asks with
// backoff, 1 s doubling to 30 s, until HSM holds it (one it already
// holds, the subscriber restarted, is kept: HSM keeps its cursor). Then,
// every Check, it lists HSM's subscriptions and subscribes again when its
// own (same Subscriber and Url) is gone - HSM dropped it after its
// deliveries failed for -scn-dead-after, an operator deleted it, or HSM
// restarted with an empty database - and puts its filters back when they
// were changed. Subscriptions of the same agent to the same Url under
// another name (the agent@host an older build used) are deleted once it
// holds its own, so the Url does not get every SCN twice.
func Hold(ctx context.Context, h Subscriber, cfg HoldConfig) {
	if cfg.Check <= 0 {
		cfg.Check = DefaultHoldCheck
	}
	if cfg.After == nil {
		cfg.After = time.After
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	k := keeper{h: h, cfg: cfg}
	failures := 0
	for {
		wait := cfg.Check
		if err := k.check(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			cfg.Log.Warn("hsm_subscribe_failed", "attempt", failures, "err", err)
			wait = min(time.Second<<min(failures, 5), 30*time.Second)
			failures++
		} else {
			failures = 0
			if k.gap && cfg.Regained != nil {
				cfg.Regained(ctx)
			}
			k.gap = false
		}
		select {
		case <-ctx.Done():
			return
		case <-cfg.After(wait):
		}
	}
}

// keeper is Hold's record between checks.
type keeper struct {
	h   Subscriber
	cfg HoldConfig
	// held: HSM held the subscription at the last check.
	held bool
	// ever: HSM has held it at least once (a later subscription is a restore).
	ever bool
	// gap: this check found it gone or changed after ever (SCNs missed).
	gap bool
}

// check makes sure HSM holds the subscription, as built from the values
// HSM knows now.
func (k *keeper) check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := k.h.Values(ctx)
	if err != nil {
		return err
	}
	want := k.cfg.Build(v)
	list, err := k.h.Subscriptions(ctx)
	if err != nil && !errors.Is(err, problem.ErrNotFound) {
		return err
	}
	mine, found := own(list, want)
	switch {
	case !found:
		if k.held {
			k.held = false
			k.tell(false)
		}
		if _, err := k.h.Subscribe(ctx, want); err != nil && !errors.Is(err, problem.ErrConflict) {
			return err
		}
		k.restored(want, "gone")
	case !sameFilters(mine, want):
		if err := k.h.PatchSubscription(ctx, mine.ID, replaceAll(want)); err != nil {
			return err
		}
		k.restored(want, "changed")
	case !k.held:
		k.restored(want, "")
	}
	k.dropLegacy(ctx, list, want)
	return nil
}

// restored notes that HSM holds sub again (why: "gone", "changed", or ""
// when it held it as it was).
func (k *keeper) restored(sub hsm.Subscription, why string) {
	log := k.cfg.Log.With("subscriber", sub.Subscriber, "url", redact.URL(sub.Url))
	k.gap = k.ever && (why != "" || !k.held)
	if k.ever && why != "" {
		if k.cfg.Restored != nil {
			k.cfg.Restored.Inc()
		}
		log.Warn("hsm_subscription_restored", "reason", why)
	} else if !k.held {
		log.Info("hsm_subscribed")
	}
	k.ever = true
	if !k.held {
		k.held = true
		k.tell(true)
	}
}

func (k *keeper) tell(held bool) {
	if k.cfg.Held != nil {
		k.cfg.Held(held)
	}
}

// dropLegacy deletes the subscriptions of want's agent to want's Url under
// another name: the same daemon subscribed under the name an older build
// gave it, and HSM would post every SCN to the Url twice.
func (k *keeper) dropLegacy(ctx context.Context, list []hsm.Subscription, want hsm.Subscription) {
	for _, s := range Superseded(list, want) {
		if err := k.h.Unsubscribe(ctx, s.ID); err != nil && !errors.Is(err, problem.ErrNotFound) {
			k.cfg.Log.Warn("hsm_unsubscribe_failed", "id", s.ID, "subscriber", s.Subscriber, "err", err)
			continue
		}
		k.cfg.Log.Info("hsm_subscription_superseded", "id", s.ID, "subscriber", s.Subscriber,
			"url", redact.URL(s.Url), "by", want.Subscriber)
	}
}

// Superseded returns the subscriptions in list that want replaces: those
// of the same agent (the part of Subscriber before '@') to the same Url
// under another name (agent@hostname of an older build), which would have
// HSM post every SCN to the Url twice.
func Superseded(list []hsm.Subscription, want hsm.Subscription) []hsm.Subscription {
	agent, _, ok := strings.Cut(want.Subscriber, "@")
	if !ok {
		return nil
	}
	var out []hsm.Subscription
	for _, s := range list {
		if strings.EqualFold(s.Url, want.Url) && !strings.EqualFold(s.Subscriber, want.Subscriber) &&
			strings.HasPrefix(strings.ToLower(s.Subscriber), strings.ToLower(agent)+"@") {
			out = append(out, s)
		}
	}
	return out
}

// Own finds want's subscription in list: the same Subscriber and Url.
func Own(list []hsm.Subscription, want hsm.Subscription) (hsm.Subscription, bool) {
	return own(list, want)
}

// own finds want's subscription in list: the same Subscriber and Url.
// Case is ignored: CSM's HSM stores both lower-cased.
func own(list []hsm.Subscription, want hsm.Subscription) (hsm.Subscription, bool) {
	for _, s := range list {
		if strings.EqualFold(s.Subscriber, want.Subscriber) && strings.EqualFold(s.Url, want.Url) {
			return s, true
		}
	}
	return hsm.Subscription{}, false
}

// SameFilters reports whether got, a subscription HSM holds, triggers on
// what want does (lists compared as sets, ignoring case; no Enabled is
// false): when it does there is nothing to PATCH.
func SameFilters(got, want hsm.Subscription) bool { return sameFilters(got, want) }

// sameFilters reports whether got triggers on what want does (lists
// compared as sets, ignoring case; no Enabled is false).
func sameFilters(got, want hsm.Subscription) bool {
	enabled := func(b *bool) bool { return b != nil && *b }
	return enabled(got.Enabled) == enabled(want.Enabled) && sameSet(got.States, want.States) &&
		sameSet(got.Roles, want.Roles) && sameSet(got.SubRoles, want.SubRoles) &&
		sameSet(got.SoftwareStatus, want.SoftwareStatus)
}

func sameSet(a, b []string) bool {
	within := func(x, y []string) bool {
		for _, v := range x {
			if !slices.ContainsFunc(y, func(w string) bool { return strings.EqualFold(v, w) }) {
				return false
			}
		}
		return true
	}
	return within(a, b) && within(b, a)
}

// replaceAll is the PATCH that sets every filter of a subscription to want's.
func replaceAll(want hsm.Subscription) hsm.SubscriptionPatch {
	list := func(l []string) *[]string {
		if l == nil {
			l = []string{}
		}
		return &l
	}
	f := false
	en := want.Enabled
	if en == nil {
		en = &f
	}
	return hsm.SubscriptionPatch{Op: "replace", Enabled: en, Roles: list(want.Roles), SubRoles: list(want.SubRoles),
		SoftwareStatus: list(want.SoftwareStatus), States: list(want.States)}
}

// SubscriberName is the Subscriber a daemon gives HSM for the callback
// URL it takes SCNs on: agent@host:port of that URL (the port of its
// scheme when it names none). It keeps the agent@host form of CSM's
// services (HSM's spec example is "scnfd@sms02.cray.com"; HSM stores it as
// an opaque string), and is one per callback: two instances of a daemon
// on one host listen on two ports, so they hold two subscriptions instead
// of taking one from each other (our HSM moves the subscription of an
// agent@ Subscriber that comes back on another Url to the new Url); an
// instance restarted on its port takes its subscription, and HSM's cursor
// of it, back; replicas behind one Service URL share one subscription.
func SubscriberName(agent, callback string) string {
	u, err := url.Parse(callback)
	if err != nil || u.Hostname() == "" {
		return agent + "@localhost"
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return agent + "@" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// Known returns those of want that are in have (the values HSM knows),
// in want's order.
func Known(want, have []string) []string {
	var out []string
	for _, w := range want {
		for _, h := range have {
			if w == h {
				out = append(out, w)
				break
			}
		}
	}
	return out
}

// NewRestoredCounter returns the counter of HoldConfig.Restored for a
// daemon, <agent>_hsm_subscriptions_restored_total, registered with reg
// (nil: nowhere).
func NewRestoredCounter(agent string, reg prometheus.Registerer) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: agent + "_hsm_subscriptions_restored_total",
		Help: "SCN subscriptions HSM no longer held (dropped, deleted, HSM's database replaced) or held changed, subscribed again."})
	if reg != nil {
		reg.MustRegister(c)
	}
	return c
}
