package fanout

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// lockedBuilder is a strings.Builder safe for the service's goroutines.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSubscriberPasswordNotLogged: a password in a subscriber URL is masked
// in every log line and metric label of a failing delivery, while the API
// keeps answering the URL as stored.
func TestSubscriberPasswordNotLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newReceiver()
		var logs lockedBuilder
		store, err := OpenStore(context.WithoutCancel(t.Context()), dbPath(t))
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		reg := prometheus.NewRegistry()
		log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		svc, err := New(t.Context(), store, bubbleConfig(rc), log, reg)
		if err != nil {
			t.Fatal(err)
		}
		const url = "http://scn:s3cret@a/down"
		mustSubscribe(t, svc, Key{Component: "x1c0s0b0n0", Agent: "a"}, Subscription{States: []string{"On"}, Url: url})
		rc.set(func() { rc.down["/down"] = true })
		stop := runService(t, svc)
		enqueueStates(t, svc, 1, 3, "x1c0s0b0n1", "On")
		time.Sleep(10 * time.Minute) // retries run on the fake clock
		synctest.Wait()
		if got := svc.List("x1c0s0b0n0"); len(got) != 1 || got[0].Url != url {
			t.Errorf("List = %+v, want the URL as stored", got)
		}
		stop()
		if err := svc.Unsubscribe(t.Context(), Key{Component: "x1c0s0b0n0", Agent: "a"}, false, url); err != nil {
			t.Fatal(err)
		}
		out := logs.String()
		if !strings.Contains(out, "scn:xxxxx@a/down") {
			t.Errorf("log never names the subscriber:\n%s", out)
		}
		if strings.Contains(out, "s3cret") {
			t.Errorf("log holds the password:\n%s", out)
		}
		mfs, err := reg.Gather()
		if err != nil || len(mfs) == 0 {
			t.Fatalf("gather: %d families, %v", len(mfs), err)
		}
		for _, mf := range mfs {
			if strings.Contains(mf.String(), "s3cret") {
				t.Errorf("metric %s holds the password", mf.GetName())
			}
		}
	})
}
