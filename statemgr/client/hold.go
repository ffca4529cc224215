package client

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/redact"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// Subscriber is what Hold asks HSM: the values it knows, and a
// subscription (*Client is one).
type Subscriber interface {
	Values(ctx context.Context) (hsm.Values, error)
	Subscribe(ctx context.Context, sub hsm.Subscription) (hsm.Subscription, error)
}

// Hold has HSM hold an SCN subscription: build makes it from the values
// HSM knows (HSM refuses a filter naming a value it does not know). It
// asks again with backoff, 1 s doubling to 30 s, until HSM holds it (one
// it already holds, the subscriber restarted, is kept as it is; HSM moves
// the one of a Subscriber of the agent@host form that comes back on
// another Url, see docs/hsm.md) and reports true; or until ctx ends, and
// reports false.
func Hold(ctx context.Context, h Subscriber, log *slog.Logger, build func(hsm.Values) hsm.Subscription) bool {
	for attempt := 0; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		v, err := h.Values(cctx)
		var sub hsm.Subscription
		if err == nil {
			sub = build(v)
			_, err = h.Subscribe(cctx, sub)
		}
		cancel()
		if err == nil || errors.Is(err, problem.ErrConflict) {
			log.Info("hsm_subscribed", "url", redact.URL(sub.Url))
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		log.Warn("hsm_subscribe_failed", "attempt", attempt, "err", err)
		wait := time.NewTimer(min(time.Second<<min(attempt, 5), 30*time.Second))
		select {
		case <-ctx.Done():
			wait.Stop()
			return false
		case <-wait.C:
		}
	}
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
