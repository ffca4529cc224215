package client

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// flakyHSM refuses the first subscriptions it is told to, then answers
// err; it lists none.
type flakyHSM struct {
	refuse int
	err    error
	asked  []hsm.Subscription
	at     []time.Duration
	start  time.Time
}

func (f *flakyHSM) Values(context.Context) (hsm.Values, error) {
	return hsm.Values{State: []string{"Off", "On", "Ready"}}, nil
}

func (f *flakyHSM) Subscriptions(context.Context) ([]hsm.Subscription, error) { return nil, nil }

func (f *flakyHSM) Subscribe(_ context.Context, sub hsm.Subscription) (hsm.Subscription, error) {
	f.asked = append(f.asked, sub)
	f.at = append(f.at, time.Since(f.start))
	if len(f.asked) <= f.refuse {
		return hsm.Subscription{}, errors.New("HSM is starting")
	}
	return sub, f.err
}

func (f *flakyHSM) PatchSubscription(context.Context, int64, hsm.SubscriptionPatch) error {
	return errors.New("not held")
}

func (f *flakyHSM) Unsubscribe(context.Context, int64) error { return errors.New("not held") }

// TestHold: the subscription is asked for again 1 s, 2 s, 4 s ... after a
// refusal, with the states HSM knows; one HSM already holds (409) counts
// as held; a context that ends stops the retries.
func TestHold(t *testing.T) {
	build := func(v hsm.Values) hsm.Subscription {
		return hsm.Subscription{Subscriber: "x", Url: "http://x/scn", States: Known([]string{"On", "Halt", "Off"}, v.State)}
	}
	for _, tt := range []struct {
		name   string
		refuse int
		err    error
		stop   time.Duration
		held   bool
		at     []time.Duration
	}{
		{name: "after refusals", refuse: 3, held: true, at: []time.Duration{0, time.Second, 3 * time.Second, 7 * time.Second}},
		{name: "already held", err: problem.Conflictf("exists"), held: true, at: []time.Duration{0}},
		{name: "stopped", refuse: 100, stop: 2 * time.Second, at: []time.Duration{0, time.Second}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &flakyHSM{refuse: tt.refuse, err: tt.err, start: time.Now()}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tt.stop > 0 {
					ctx, cancel = context.WithTimeout(ctx, tt.stop)
					defer cancel()
				}
				held := false
				Hold(ctx, f, HoldConfig{Log: slog.New(slog.DiscardHandler), Build: build, Held: func(h bool) {
					held = h
					cancel()
				}})
				if held != tt.held {
					t.Errorf("held %v, want %v", held, tt.held)
				}
				if d := cmp.Diff(tt.at, f.at); d != "" {
					t.Errorf("asked at (-want +got):\n%s", d)
				}
				if got := f.asked[0].States; !cmp.Equal(got, []string{"On", "Off"}) {
					t.Errorf("states %q, want those HSM knows", got)
				}
			})
		})
	}
}

// TestSubscriberName: agent@host:port of the callback, the scheme's port
// when it names none; a URL without a host falls back to localhost.
func TestSubscriberName(t *testing.T) {
	for _, tt := range []struct{ callback, want string }{
		{callback: "http://ncn-m001:27778/boot/v1/scn", want: "bss@ncn-m001:27778"},
		{callback: "http://NCN-M001:27779/boot/v1/scn", want: "bss@ncn-m001:27779"},
		{callback: "https://cray-bss/boot/v1/scn", want: "bss@cray-bss:443"},
		{callback: "http://cray-bss/boot/v1/scn", want: "bss@cray-bss:80"},
		{callback: "http://[::1]:8080/scn", want: "bss@[::1]:8080"},
		{callback: "/boot/v1/scn", want: "bss@localhost"},
	} {
		if got := SubscriberName("bss", tt.callback); got != tt.want {
			t.Errorf("SubscriberName(bss, %q) = %q, want %q", tt.callback, got, tt.want)
		}
	}
}
