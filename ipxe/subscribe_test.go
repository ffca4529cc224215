package ipxe

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// startBSS runs another BSS on HSM at hsmURL, with SCNs to scnIn (empty:
// its own URL), until the test ends, and waits until HSM holds its
// subscription.
func startBSS(t *testing.T, hsmURL, scnIn string) *Daemon {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	bss, err := StartDaemon(ctx, DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "bss.db"),
		HSMURL: hsmURL, AdvertiseURL: "http://bss", ScnInURL: scnIn, Resync: time.Hour})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = bss.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-bss.Service().Subscribed():
	case <-time.After(10 * time.Second):
		t.Fatal("BSS did not subscribe to HSM")
	}
	return bss
}

// bssSubscriptions returns HSM's subscriptions of BSS (bss@...).
func bssSubscriptions(t *testing.T, hc *client.Client) []hsm.Subscription {
	t.Helper()
	subs, err := hc.Subscriptions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []hsm.Subscription
	for _, s := range subs {
		if strings.HasPrefix(s.Subscriber, "bss@") {
			out = append(out, s)
		}
	}
	return out
}

// TestRestartedBSSKeepsItsSubscription: a BSS restarted on the same
// callback URL finds HSM already holding its subscription (409) and takes
// it as held, as bss@<host:port> of its callback. A second BSS on the
// same host, on another port, holds a subscription of its own: neither
// takes the other's.
func TestRestartedBSSKeepsItsSubscription(t *testing.T) {
	hc, first := withHSM(t)
	before := bssSubscriptions(t, hc)
	name := "bss@" + strings.TrimPrefix(first.URL(), "http://")
	if len(before) != 1 || !strings.HasPrefix(before[0].Url, first.URL()) || before[0].Subscriber != name {
		t.Fatalf("subscriptions of BSS = %+v, want one of %s to %s", before, name, first.URL())
	}

	startBSS(t, hc.URL(), before[0].Url)
	if got := bssSubscriptions(t, hc); len(got) != 1 || !cmp.Equal(got[0], before[0]) {
		t.Errorf("after a restart on the same URL: %+v, want %+v alone", got, before[0])
	}

	second := startBSS(t, hc.URL(), "")
	got := map[string]string{}
	for _, s := range bssSubscriptions(t, hc) {
		got[s.Subscriber] = s.Url
	}
	want := map[string]string{name: before[0].Url,
		"bss@" + strings.TrimPrefix(second.URL(), "http://"): second.URL() + Base + "/scn"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("subscriptions with a second BSS on the host (-want +got):\n%s", d)
	}
}

// TestRestoredSubscriptionRereadsHSM: when a check finds that HSM lost
// BSS's subscription (deleted, dropped, HSM restarted on an empty
// database) or changed its filters, BSS subscribes again and reads HSM at
// once: the SCNs of the gap were not sent, and here the periodic resync is
// an hour away.
func TestRestoredSubscriptionRereadsHSM(t *testing.T) {
	const id = "x3000c0s1b0n0"
	for _, tt := range []struct {
		name string
		lose func(ctx context.Context, hc *client.Client, sub hsm.Subscription) error
	}{
		{name: "deleted", lose: func(ctx context.Context, hc *client.Client, sub hsm.Subscription) error {
			return hc.Unsubscribe(ctx, sub.ID)
		}},
		{name: "changed", lose: func(ctx context.Context, hc *client.Client, sub hsm.Subscription) error {
			return hc.PatchSubscription(ctx, sub.ID, hsm.SubscriptionPatch{Op: "replace", States: &[]string{"Ready"}, Roles: &[]string{}})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hc, _ := withHSM(t)
			// This BSS's callback does not answer: only its reads of HSM
			// bring it what changed.
			const callback = "http://127.0.0.1:9/boot/v1/scn"
			ticks := make(chan time.Time)
			h := newHarness(t, func(c *Config) {
				c.HSM = hc
				c.Sync = SyncConfig{CallbackURL: callback, Resync: time.Hour,
					After: func(time.Duration) <-chan time.Time { return ticks }}
			})
			ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
			done := make(chan struct{})
			go func() { defer close(done); _ = h.svc.RunSync(ctx) }()
			t.Cleanup(func() { cancel(); <-done })
			<-h.svc.Subscribed()
			c := h.svc.cache
			waitFor(t, c, "the initial read of HSM", func() bool { n, ok := c.Node(id); return ok && n.State == "On" })

			var mine hsm.Subscription
			for _, s := range bssSubscriptions(t, hc) {
				if s.Url == callback {
					mine = s
				}
			}
			if err := tt.lose(t.Context(), hc, mine); err != nil {
				t.Fatal(err)
			}
			if err := hc.StateData(t.Context(), id, "Off", "", false); err != nil {
				t.Fatal(err)
			}
			ticks <- time.Time{} // the next check
			waitFor(t, c, "the read of HSM after the subscription was restored", func() bool { n, ok := c.Node(id); return ok && n.State == "Off" })
		})
	}
}

// TestFailedResyncRetried: a full read of HSM that fails (here the one
// asked for when the subscription was restored) is tried again with
// backoff until one succeeds, instead of leaving the cache as stale as the
// lost SCNs made it until the next periodic resync (an hour here).
func TestFailedResyncRetried(t *testing.T) {
	const id = "x3000c0s1b0n0"
	hc, _ := withHSM(t)
	flaky := &failingHSM{HSM: NewHSMClient(hc.URL(), nil)}
	waits := make(chan time.Duration, 1)
	ticks := make(chan time.Time)
	h := newHarness(t, func(c *Config) {
		c.HSM = flaky
		c.Sync = SyncConfig{Resync: time.Hour, RetryAfter: func(d time.Duration) <-chan time.Time {
			waits <- d
			return ticks
		}}
	})
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan struct{})
	go func() { defer close(done); _ = h.svc.RunSync(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	c := h.svc.cache
	waitFor(t, c, "the initial read of HSM", func() bool { n, ok := c.Node(id); return ok && n.State == "On" })

	if err := hc.StateData(t.Context(), id, "Off", "", false); err != nil {
		t.Fatal(err)
	}
	flaky.fails.Store(2)
	h.svc.Resync() // as a restored subscription asks
	for _, want := range []time.Duration{time.Second, 2 * time.Second} {
		select {
		case got := <-waits:
			if got != want {
				t.Errorf("retry after %v, want %v", got, want)
			}
		case <-time.After(10 * time.Second): // a guard, not a timing
			t.Fatalf("a failed read was not retried (want a retry after %v)", want)
		}
		ticks <- time.Time{}
	}
	waitFor(t, c, "the retried read of HSM", func() bool { n, ok := c.Node(id); return ok && n.State == "Off" })
	select {
	case d := <-waits:
		t.Errorf("a retry after %v though the read succeeded", d)
	default:
	}
}

// failingHSM fails its next fails reads of the components.
type failingHSM struct {
	HSM
	fails atomic.Int32
}

func (f *failingHSM) Components(ctx context.Context, q url.Values) ([]Component, error) {
	if f.fails.Add(-1) >= 0 {
		return nil, errors.New("hsm: 503 Service Unavailable")
	}
	return f.HSM.Components(ctx, q)
}
