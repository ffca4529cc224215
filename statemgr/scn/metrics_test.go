package scn_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
	"github.com/hmsuite/hms/statemgr/scn"
)

// TestRelayMetricsBySubscriber: the per-subscriber series are labelled by
// Subscriber, so a daemon that subscribes again (new ID: its subscription
// was dropped or deleted, HSM restarted empty) adds to its series instead
// of starting another, and names past MetricSubscribers share "other".
func TestRelayMetricsBySubscriber(t *testing.T) {
	clock, s, comps := clockedStore(t)
	ctx, st := t.Context(), scn.NewStore(s)
	clock.Add(scn.NewDatabaseReplay) // each subscription gets only the SCNs after it
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(srv.Close)
	reg := prometheus.NewRegistry()
	runRelay(t, s, scn.RelayConfig{After: never, Registerer: reg, MetricSubscribers: 2, Log: slog.New(slog.DiscardHandler)})
	// deliver subscribes name, sets the node Ready (Off first, so it
	// changes), waits until the series are want and unsubscribes (the
	// relay counts a post once it is answered: deleting the subscription
	// before then could cancel the count).
	deliver := func(name string, want map[string]float64) int64 {
		t.Helper()
		sub, err := st.CreateSubscription(ctx, hsm.Subscription{Subscriber: name, Url: srv.URL, States: []string{"Ready"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, state := range []string{"Off", "Ready"} {
			if _, err := component.NewStore(s).UpdateState(ctx, hsmtest.IDsOf(comps), component.StateUpdate{State: state, Force: true}); err != nil {
				t.Fatal(err)
			}
		}
		var got map[string]float64
		for deadline := time.Now().Add(30 * time.Second); !cmp.Equal(want, got); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("after a post to %s, hsm_scn_delivered_total by subscriber (-want +got):\n%s", name, cmp.Diff(want, got))
			}
			got = series(t, reg, "hsm_scn_delivered_total", "subscriber")
		}
		if _, err := st.DeleteSubscription(ctx, sub.ID); err != nil {
			t.Fatal(err)
		}
		return sub.ID
	}
	bss := "bss@ncn-m001:27778"
	first := deliver(bss, map[string]float64{bss: 1})
	if again := deliver(bss, map[string]float64{bss: 2}); again == first {
		t.Fatalf("subscribed again with the same ID %d; the test needs a new one", again)
	}
	deliver("hbtd@ncn-m001:28500", map[string]float64{bss: 2, "hbtd@ncn-m001:28500": 1})
	deliver("hmnfd-pod_1", map[string]float64{bss: 2, "hbtd@ncn-m001:28500": 1, "other": 1})
}

// series returns the values of metric name by the value of its label.
func series(t *testing.T, reg *prometheus.Registry, name, label string) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			key := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					key = l.GetValue()
				}
			}
			out[key] = m.GetCounter().GetValue()
		}
	}
	return out
}
