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

// flakyHSM refuses the first calls it is told to, then answers err.
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

func (f *flakyHSM) Subscribe(_ context.Context, sub hsm.Subscription) (hsm.Subscription, error) {
	f.asked = append(f.asked, sub)
	f.at = append(f.at, time.Since(f.start))
	if len(f.asked) <= f.refuse {
		return hsm.Subscription{}, errors.New("HSM is starting")
	}
	return sub, f.err
}

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
				ctx := t.Context()
				if tt.stop > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.stop)
					defer cancel()
				}
				if held := Hold(ctx, f, slog.New(slog.DiscardHandler), build); held != tt.held {
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
