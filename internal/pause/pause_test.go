package pause

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if !For(t.Context(), time.Minute) || time.Since(start) != time.Minute {
			t.Errorf("For(live ctx, 1m) returned false or after %v", time.Since(start))
		}
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Second, cancel)
		start = time.Now()
		if For(ctx, time.Hour) || time.Since(start) != time.Second {
			t.Errorf("For(ctx ended after 1s, 1h) returned true or after %v", time.Since(start))
		}
	})
}
