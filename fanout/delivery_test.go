package fanout

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// bubbleConfig is a delivery config whose HTTP client serves rc in memory.
func bubbleConfig(rc *receiver) Config {
	return Config{Client: &http.Client{Transport: rc}, RetryMin: time.Second, RetryMax: 30 * time.Second,
		Timeout: 5 * time.Second, BatchMax: 1, RetentionAge: time.Hour, RetentionCount: 1000}
}

func enqueueStates(t *testing.T, svc *Service, from, to int64, comp, state string) {
	t.Helper()
	var scns []hsm.SCN
	for seq := from; seq <= to; seq++ {
		scns = append(scns, stateSCN(seq, comp, state))
	}
	if _, err := svc.Enqueue(t.Context(), scns, "test"); err != nil {
		t.Fatal(err)
	}
}

func seqRange(from, to int64) []int64 {
	var out []int64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

func TestSubscriberDownThenUpGetsBacklogInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newReceiver()
		svc, store := openService(t, dbPath(t), bubbleConfig(rc))
		const node = "x1c0s0b0n0"
		mustSubscribe(t, svc, Key{Component: node, Agent: "a"}, Subscription{States: []string{"On", "Off"}, Url: "http://a/a-down"})
		mustSubscribe(t, svc, Key{Component: "x1c0s0b0n1", Agent: "b"}, Subscription{States: []string{"On", "Off"}, Url: "http://b/scn"})
		rc.set(func() { rc.down["/a-down"] = true })
		stop := runService(t, svc)
		// The subscriber's own node goes Off: HMS would prune it here.
		enqueueStates(t, svc, 1, 20, node, "Off")
		enqueueStates(t, svc, 21, 40, node, "On")
		synctest.Wait()
		if got := seqs(rc.deliveries("/scn")); !cmp.Equal(got, seqRange(1, 40)) {
			t.Errorf("healthy subscriber got %v, want 1..40 in order", got)
		}
		time.Sleep(10 * time.Minute) // a's node reboots; the fake clock runs the retries
		synctest.Wait()
		if n := len(rc.deliveries("/a-down")); n != 0 {
			t.Fatalf("down subscriber received %d", n)
		}
		if got := svc.List(node); len(got) != 1 {
			t.Fatalf("subscription of the down subscriber: %v, want it kept", got)
		}
		rc.set(func() { rc.down["/a-down"] = false })
		time.Sleep(time.Minute) // longer than RetryMax
		synctest.Wait()
		if diff := cmp.Diff(seqRange(1, 40), seqs(rc.deliveries("/a-down"))); diff != "" {
			t.Errorf("backlog after recovery (-want +got):\n%s", diff)
		}
		if r := value(t, svc.m.retries.WithLabelValues("http://a/a-down")); r < 2 {
			t.Errorf("retries = %v, want several", r)
		}
		stop()
		if backlogs, _, err := store.backlogs(context.Background()); err != nil || len(backlogs) != 0 {
			t.Errorf("rows left in queue after delivery: %v %v", backlogs, err)
		}
		if n := storedSCNs(t, store); n != 0 {
			t.Errorf("%d SCN bodies left after delivery, want none", n)
		}
	})
}

func TestFailingSubscribersDoNotBlockOthers(t *testing.T) {
	for _, mode := range []string{"hang", "500", "refused"} {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rc := newReceiver()
				cfg := bubbleConfig(rc)
				cfg.MaxInFlight = 2
				svc, _ := openService(t, dbPath(t), cfg)
				for i := range 3 {
					mustSubscribe(t, svc, Key{Component: "x1c0s0b0n0", Agent: fmt.Sprint("bad", i)},
						Subscription{States: []string{"Ready"}, Url: fmt.Sprintf("http://bad/%d", i)})
				}
				mustSubscribe(t, svc, Key{Component: "x1c0s0b0n1", Agent: "good"}, Subscription{States: []string{"Ready"}, Url: "http://good/"})
				rc.set(func() {
					for i := range 3 {
						p := fmt.Sprintf("/%d", i)
						switch mode {
						case "hang":
							rc.hang[p] = true
						case "500":
							rc.status[p] = http.StatusInternalServerError
						default:
							rc.down[p] = true
						}
					}
				})
				runService(t, svc)
				start := time.Now()
				enqueueStates(t, svc, 1, 10, "x1c0s0b0n5", "Ready")
				for len(rc.deliveries("/")) < 10 {
					time.Sleep(100 * time.Millisecond)
				}
				// Three hanging subscribers share two request slots, so the good one
				// may wait out one request timeout, never more.
				if took := time.Since(start); took > 2*cfg.Timeout {
					t.Errorf("good subscriber took %v for 10 SCNs", took)
				}
				if got := seqs(rc.deliveries("/")); !cmp.Equal(got, seqRange(1, 10)) {
					t.Errorf("good subscriber got %v", got)
				}
			})
		})
	}
}

func TestRetentionExpiresSubscriber(t *testing.T) {
	tests := []struct {
		name  string
		count int
		scns  int64
		wait  time.Duration
	}{
		{name: "age", count: 1000, scns: 5, wait: 2 * time.Hour},
		{name: "count", count: 3, scns: 5, wait: time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rc := newReceiver()
				cfg := bubbleConfig(rc)
				cfg.RetentionCount = tc.count
				svc, store := openService(t, dbPath(t), cfg)
				k := Key{Component: "x1c0s0b0n0", Agent: "gone"}
				mustSubscribe(t, svc, k, Subscription{States: []string{"On"}, Url: "http://gone/"})
				mustSubscribe(t, svc, Key{Component: "x1c0s0b0n1"}, Subscription{States: []string{"On"}, Url: "http://stays/x"})
				rc.set(func() { rc.down["/"] = true })
				runService(t, svc)
				enqueueStates(t, svc, 1, tc.scns, "x1c0s0b0n7", "On")
				time.Sleep(30 * time.Minute)
				synctest.Wait()
				if tc.name == "age" && len(svc.List("x1c0s0b0n0")) != 1 {
					t.Fatal("subscriber expired before the retention age")
				}
				time.Sleep(tc.wait)
				synctest.Wait()
				if got := svc.List("x1c0s0b0n0"); len(got) != 0 {
					t.Errorf("subscriptions after retention = %v, want none", got)
				}
				if n := value(t, svc.m.expiries.WithLabelValues("http://gone/")); n != 1 {
					t.Errorf("expiries = %v, want 1", n)
				}
				backlogs, _, err := store.backlogs(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := backlogs["http://gone/"]; ok {
					t.Errorf("expired subscriber's backlog still stored: %v", backlogs)
				}
				if got := seqs(rc.deliveries("/x")); !cmp.Equal(got, seqRange(1, tc.scns)) || len(svc.List("x1c0s0b0n1")) != 1 {
					t.Errorf("reachable subscriber got %v and has %v, want all SCNs and its subscription", got, svc.List("x1c0s0b0n1"))
				}
			})
		})
	}
}

func TestBatchingKeepsOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newReceiver()
		cfg := bubbleConfig(rc)
		cfg.BatchMax = 4
		svc, _ := openService(t, dbPath(t), cfg)
		mustSubscribe(t, svc, Key{Component: "x1c0s0b0n0"}, Subscription{States: []string{"On", "Off"}, Url: "http://a/"})
		rc.set(func() { rc.down["/"] = true })
		runService(t, svc)
		var scns []hsm.SCN
		states := []string{"On", "On", "On", "On", "On", "Off", "Off", "On"}
		for i, st := range states {
			scns = append(scns, stateSCN(int64(i+1), fmt.Sprintf("x1c0s0b0n%d", i), st))
		}
		if _, err := svc.Enqueue(t.Context(), scns, "test"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		rc.set(func() { rc.down["/"] = false })
		time.Sleep(time.Minute)
		synctest.Wait()
		type post struct {
			State string
			Comps []string
			Seqs  []int64
		}
		var got []post
		for _, d := range rc.deliveries("/") {
			got = append(got, post{d.State, d.Components, seqs([]delivery{d})})
		}
		want := []post{
			{"On", []string{"x1c0s0b0n0", "x1c0s0b0n1", "x1c0s0b0n2", "x1c0s0b0n3"}, []int64{1, 2, 3, 4}},
			{"On", []string{"x1c0s0b0n4"}, []int64{5}},
			{"Off", []string{"x1c0s0b0n5", "x1c0s0b0n6"}, []int64{6, 7}},
			{"On", []string{"x1c0s0b0n7"}, []int64{8}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("batched posts (-want +got):\n%s", diff)
		}
	})
}

func TestRedirectIsAFailedDelivery(t *testing.T) {
	var reached atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			reached.Store(true)
			return
		}
		http.Redirect(w, r, "/moved", http.StatusFound)
	}))
	defer srv.Close()
	// net/http, used for https:// subscribers: a followed 302 would GET /moved and look delivered.
	resp, err := Config{}.withDefaults().Client.Post(srv.URL+"/scn", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Errorf("default client answered %d, want the 302 itself", resp.StatusCode)
	}
	// h1Client, used for http:// subscribers.
	c := newH1Client(5*time.Second, 1)
	defer c.close()
	if err := c.post(t.Context(), mustTarget(t, srv.URL+"/scn"), []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "302") {
		t.Errorf("h1Client post: %v, want a failure naming 302", err)
	}
	if reached.Load() {
		t.Error("a redirect was followed")
	}
}

// TestURLChangeTakesTheBacklogAlong: a subscriber that is down and then
// PATCHes its subscription to a new URL gets, there, what it missed, in
// order; nothing more goes to the old URL.
func TestURLChangeTakesTheBacklogAlong(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newReceiver()
		svc, store := openService(t, dbPath(t), bubbleConfig(rc))
		const node = "x1c0s0b0n0"
		k := Key{Component: "x1c0s0b0n9", Agent: "a"}
		mustSubscribe(t, svc, k, Subscription{Components: []string{node}, States: []string{"On", "Off"}, Url: "http://a/old"})
		rc.set(func() { rc.down["/old"] = true })
		stop := runService(t, svc)
		defer stop()
		enqueueStates(t, svc, 1, 5, node, "Off")
		time.Sleep(time.Minute)
		synctest.Wait()
		if err := svc.Update(t.Context(), k, Subscription{Url: "http://a/new"}); err != nil {
			t.Fatal(err)
		}
		enqueueStates(t, svc, 6, 8, node, "On")
		time.Sleep(time.Minute)
		synctest.Wait()
		if diff := cmp.Diff(seqRange(1, 8), seqs(rc.deliveries("/new"))); diff != "" {
			t.Errorf("new URL got (-want +got):\n%s", diff)
		}
		rc.set(func() { rc.down["/old"] = false })
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := len(rc.deliveries("/old")); n != 0 {
			t.Errorf("old URL got %d deliveries after the move", n)
		}
		if backlogs, _, err := store.backlogs(context.Background()); err != nil || len(backlogs) != 0 {
			t.Errorf("rows left in queue after delivery: %v %v", backlogs, err)
		}
	})
}
