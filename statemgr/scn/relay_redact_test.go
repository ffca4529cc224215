package scn_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
	"github.com/hmsuite/hms/statemgr/scn"
)

// TestRelayMasksSubscriberPassword: a password in an SCN subscription URL
// is masked in the log line of every failed delivery.
func TestRelayMasksSubscriberPassword(t *testing.T) { pg.EachDB(t, testRelayMasksSubscriberPassword) }

func testRelayMasksSubscriberPassword(t *testing.T, db testpeer.DB) {
	s, _ := hsmtest.NewStoreOn(t, db, core.Config{})
	ctx := t.Context()
	comps := hsmtest.Nodes(1, 1)
	if err := component.NewStore(s).UpsertComponents(ctx, comps, false, nil); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	fails := 2
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if fails > 0 {
			fails--
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if fails == 0 {
			fails--
			close(done)
		}
	}))
	defer srv.Close()
	now := func(time.Duration) <-chan time.Time {
		ch := make(chan time.Time, 1)
		ch <- time.Time{}
		return ch
	}
	var logs strings.Builder
	var lmu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		lmu.Lock()
		defer lmu.Unlock()
		return logs.Write(p)
	}), nil))
	rctx, stop := context.WithCancel(ctx)
	errc := make(chan error, 1)
	relay := scn.NewRelay(scn.NewStore(s), scn.RelayConfig{After: now, CompactEvery: time.Hour, MinBackoff: time.Second, MaxBackoff: time.Second, Log: log})
	go func() { errc <- relay.Run(rctx) }()
	url := strings.Replace(srv.URL, "http://", "http://scn:s3cret@", 1)
	if _, err := scn.NewStore(s).CreateSubscription(ctx, hsm.Subscription{Subscriber: "test", Url: url, States: []string{"Ready"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := component.NewStore(s).UpdateState(ctx, hsmtest.IDsOf(comps), component.StateUpdate{State: "Ready", Force: true}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, done, "the SCN after two failures")
	stop()
	<-errc
	lmu.Lock()
	defer lmu.Unlock()
	if out := logs.String(); strings.Contains(out, "s3cret") || !strings.Contains(out, "scn:xxxxx@127.0.0.1") {
		t.Errorf("want scn_post_failed lines naming the URL without its password:\n%s", out)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
