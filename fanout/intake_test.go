package fanout

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// TestHTTPSCNIsFannedOut: an SCN POSTed by HSM (its callback format: many
// components, no Seq, no Timestamp) reaches the subscriber of the matching
// components, normalised and stamped.
func TestHTTPSCNIsFannedOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newReceiver()
		svc, _ := openService(t, dbPath(t), Config{Client: &http.Client{Transport: rc}})
		api := &http.Client{Transport: handlerTransport{NewAPI(svc, quietLog(), Params{Port: 28600}, nil).Handler()}}
		runService(t, svc)
		doWith(t, api, "http://nfd", call{method: "POST", path: "/hmi/v2/subscriptions/x1c0s0b0n0/agents/h", status: 200,
			body: `{"Components":["x1c0s0b0n1","x1c0s0b0n3"],"States":["Off"],"Url":"http://sub/scn"}`})
		doWith(t, api, "http://nfd", call{method: "POST", path: "/hmi/v1/scn", status: 200,
			body: `{"Components":["x1c0s0b0n1","x1c0s0b0n2","X1C0S0B0N3"],"State":"Off","Flag":"OK"}`})
		synctest.Wait()
		got := rc.deliveries("/scn")
		if len(got) != 1 {
			t.Fatalf("%d deliveries, want 1", len(got))
		}
		d := got[0]
		if diff := cmp.Diff([]string{"x1c0s0b0n1", "x1c0s0b0n3"}, d.Components); diff != "" {
			t.Errorf("delivered components (-want +got):\n%s", diff)
		}
		if d.State != "Off" || d.Flag != "OK" || d.Timestamp.IsZero() {
			t.Errorf("delivered %+v, want State Off, Flag OK and a Timestamp", d)
		}
	})
}

// fakeHSM records SCN subscription requests and refuses the first few.
type fakeHSM struct {
	mu     sync.Mutex
	refuse int
	gone   bool     // the subscription was deleted: the next PATCH is 404
	nextID int      // the ID a POST answers (0: 7)
	list   string   // GET /Subscriptions/SCN's answer ("": a list holding ID 7, hmnfd@test's)
	reqs   []string // method path body
}

func (h *fakeHSM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/hsm/v2/service/values" {
		// A site HSM configured with an extra role, Gardener.
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"State":["Unknown","Empty","Populated","Off","On","Standby","Halt","Ready"],` +
			`"Role":["Compute","Service","System","Application","Storage","Management","Gardener"],` +
			`"SubRole":["Master","Worker","Storage"]}`))
		return
	}
	if r.Method == http.MethodGet && r.URL.Path == "/hsm/v2/Subscriptions/SCN" {
		h.mu.Lock()
		list := h.list
		h.mu.Unlock()
		if list == "" {
			list = `{"SubscriptionList":[{"ID":7,"Subscriber":"hmnfd@test","Url":"http://nfd/hmi/v1/scn"}]}`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(list))
		return
	}
	var body struct {
		Op    string   `json:"Op"`
		Roles []string `json:"Roles"`
	}
	if r.Body != nil {
		_ = json.NewDecoder(r.Body).Decode(&body)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.refuse > 0 {
		h.refuse--
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	h.reqs = append(h.reqs, r.Method+" "+r.URL.Path+" "+body.Op+" "+strings.Join(body.Roles, ","))
	if h.gone && r.Method == http.MethodPatch {
		h.gone = false
		problem.WriteStatus(w, r, http.StatusNotFound, "no such subscription")
		return
	}
	id := 7
	if h.nextID != 0 {
		id = h.nextID
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"ID":%d,"Subscriber":"hmnfd@test"}`, id)
}

func (h *fakeHSM) requests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.reqs...)
}

// handlerTransport serves requests with h in memory.
type handlerTransport struct{ h http.Handler }

func (ht handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	ht.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

func TestSubscribeHSMRetriesAndFollowsFilters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hsm := &fakeHSM{refuse: 3}
		svc, _ := openService(t, dbPath(t), Config{})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() {
			done <- svc.SubscribeHSM(ctx, &http.Client{Transport: handlerTransport{hsm}}, "http://hsm:27779", "http://nfd/hmi/v1/scn", "hmnfd@test")
		}()
		time.Sleep(time.Minute) // three refusals, backoff 1 s, 2 s, 4 s
		synctest.Wait()
		mustSubscribe(t, svc, Key{Component: "x1c0s0b0n0"}, Subscription{Roles: []string{"Gardener"}, Url: "http://n/x"})
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		want := []string{
			"POST /hsm/v2/Subscriptions/SCN  Application,Compute,Management,Service,Storage,System",
			"PATCH /hsm/v2/Subscriptions/SCN/7 replace Application,Compute,Gardener,Management,Service,Storage,System",
		}
		if diff := cmp.Diff(want, hsm.requests()); diff != "" {
			t.Errorf("requests to HSM (-want +got):\n%s", diff)
		}
		if got := svc.hsmStatus.Load(); got != "subscribed, ID 7" {
			t.Errorf("HSM status %q", got)
		}
	})
}

// TestSubscribeHSMChecksItsSubscription: every client.DefaultHoldCheck
// hmnfd finds its subscription in HSM's list by Subscriber and Url: gone
// (dropped after -scn-dead-after, deleted, HSM restarted on an empty
// database) it subscribes anew; its old ID now another daemon's (a
// restarted HSM numbers from 1 again) it does not PATCH that one
// (review-6); the hmnfd@hostname subscription of an older build to the
// same Url is deleted, or HSM would post every SCN twice.
func TestSubscribeHSMChecksItsSubscription(t *testing.T) {
	roles := "Application,Compute,Management,Service,Storage,System"
	post, patch7 := "POST /hsm/v2/Subscriptions/SCN  "+roles, "PATCH /hsm/v2/Subscriptions/SCN/7 replace "+roles
	for _, tc := range []struct {
		name, list string
		want       []string
		status     string
	}{
		{name: "gone", list: `{"SubscriptionList":[]}`, want: []string{post, post}, status: "subscribed, ID 8"},
		{name: "its ID another daemon's",
			list: `{"SubscriptionList":[{"ID":7,"Subscriber":"bss@ncn-m001:27778","Url":"http://bss/scn"}]}`,
			want: []string{post, post}, status: "subscribed, ID 8"},
		{name: "held, with an older build's",
			list: `{"SubscriptionList":[{"ID":3,"Subscriber":"hmnfd@ncn-m001","Url":"http://nfd/hmi/v1/scn"},` +
				`{"ID":7,"Subscriber":"hmnfd@test","Url":"http://nfd/hmi/v1/scn"},{"ID":4,"Subscriber":"hmnfd@other:1","Url":"http://x/scn"}]}`,
			want: []string{post, "DELETE /hsm/v2/Subscriptions/SCN/3  ", patch7}, status: "subscribed, ID 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				hsm := &fakeHSM{}
				svc, _ := openService(t, dbPath(t), Config{})
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error)
				go func() {
					done <- svc.SubscribeHSM(ctx, &http.Client{Transport: handlerTransport{hsm}}, "http://hsm:27779", "http://nfd/hmi/v1/scn", "hmnfd@test")
				}()
				synctest.Wait()
				hsm.mu.Lock()
				hsm.list, hsm.nextID = tc.list, 8
				hsm.mu.Unlock()
				time.Sleep(client.DefaultHoldCheck)
				synctest.Wait()
				cancel()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, hsm.requests()); diff != "" {
					t.Errorf("requests to HSM (-want +got):\n%s", diff)
				}
				if got := svc.hsmStatus.Load(); got != tc.status {
					t.Errorf("HSM status %q, want %q", got, tc.status)
				}
			})
		})
	}
}

// TestRedeliveryDedupe: replayed bus messages are dropped and new ones kept,
// across a reset HSM database (a new, larger Epoch restarting Seq) and a
// clock step back on HSM's host, and for SCNs from an HSM that sends no
// Epoch (Seq or Timestamp decide).
func TestRedeliveryDedupe(t *testing.T) {
	at := func(ms int64) time.Time { return time.Unix(0, ms*int64(time.Millisecond)).UTC() }
	scn := func(epoch, seq, ms int64, state string) hsm.SCN {
		return hsm.SCN{Components: []string{"x1c0s0b0n0"}, State: state, Seq: seq, Epoch: epoch, Timestamp: at(ms)}
	}
	tests := []struct {
		name    string
		batches [][]hsm.SCN
		want    []int // deliveries queued per batch
	}{
		{name: "replay after an HSM database reset",
			batches: [][]hsm.SCN{{scn(1, 1000, 100, "On"), scn(2, 1, 200, "Off")}, {scn(1, 1000, 100, "On"), scn(2, 1, 200, "Off")}},
			want:    []int{2, 0}},
		{name: "clock stepped back on HSM's host",
			batches: [][]hsm.SCN{{scn(1, 10, 500, "On"), scn(1, 11, 400, "Off")}, {scn(1, 10, 500, "On"), scn(1, 11, 400, "Off")}},
			want:    []int{2, 0}},
		{name: "no epoch: a newer Timestamp still counts (reset HSM of old)",
			batches: [][]hsm.SCN{{scn(0, 1000, 100, "On"), scn(0, 1, 200, "Off")}, {scn(0, 1, 200, "Off")}},
			want:    []int{2, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc, _ := openService(t, dbPath(t), Config{Client: &http.Client{Transport: newReceiver()}})
			mustSubscribe(t, svc, Key{Component: "x1c0s0b0n9", Agent: "a"}, Subscription{Components: []string{"x1c0s0b0n0"},
				States: []string{"On", "Off"}, Url: "http://a/scn"})
			var got []int
			for _, b := range tc.batches {
				n, err := svc.Enqueue(t.Context(), b, "test")
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, n)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("deliveries queued per batch (-want +got):\n%s", diff)
			}
		})
	}
}
