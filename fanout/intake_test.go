package fanout

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

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

// fakeHSM holds SCN subscriptions as HSM does (IDs from 7; a second one
// of a Subscriber to a Url is a 409, an ID it does not hold a 404),
// records the requests that change them, and refuses the first few.
type fakeHSM struct {
	mu     sync.Mutex
	refuse int
	roles  []string // the roles /service/values lists (nil: the standard ones and a site's Gardener)
	subs   []hsm.Subscription
	nextID int64    // the ID of the next subscription (0: 7)
	reqs   []string // method path op roles
}

func (h *fakeHSM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	const base = "/hsm/v2/Subscriptions/SCN"
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/hsm/v2/service/values":
		roles := h.roles
		if roles == nil {
			roles = []string{"Compute", "Service", "System", "Application", "Storage", "Management", "Gardener"}
		}
		writeJSON(w, hsm.Values{State: []string{"Unknown", "Empty", "Populated", "Off", "On", "Standby", "Halt", "Ready"},
			Role: roles, SubRole: []string{"Master", "Worker", "Storage"}})
		return
	case r.Method == http.MethodGet && r.URL.Path == base:
		writeJSON(w, hsm.SubscriptionList{SubscriptionList: h.subs})
		return
	case h.refuse > 0:
		h.refuse--
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	var sub hsm.Subscription
	var patch hsm.SubscriptionPatch
	if r.Method == http.MethodPost {
		_ = json.NewDecoder(r.Body).Decode(&sub)
		h.reqs = append(h.reqs, r.Method+" "+r.URL.Path+"  "+strings.Join(sub.Roles, ","))
	} else {
		if r.Method == http.MethodPatch {
			_ = json.NewDecoder(r.Body).Decode(&patch)
		}
		roles := ""
		if patch.Roles != nil {
			roles = strings.Join(*patch.Roles, ",")
		}
		h.reqs = append(h.reqs, r.Method+" "+r.URL.Path+" "+patch.Op+" "+roles)
	}
	if r.Method == http.MethodPost {
		if _, ok := client.Own(h.subs, sub); ok {
			problem.WriteStatus(w, r, http.StatusConflict, "subscription exists")
			return
		}
		if h.nextID == 0 {
			h.nextID = 7
		}
		sub.ID = h.nextID
		h.nextID++
		h.subs = append(h.subs, sub)
		writeJSON(w, sub)
		return
	}
	i := slices.IndexFunc(h.subs, func(s hsm.Subscription) bool { return base+"/"+strconv.FormatInt(s.ID, 10) == r.URL.Path })
	if i < 0 {
		problem.WriteStatus(w, r, http.StatusNotFound, "no such subscription")
		return
	}
	if r.Method == http.MethodDelete {
		h.subs = slices.Delete(h.subs, i, i+1)
	} else {
		s := &h.subs[i]
		s.Enabled, s.Roles, s.SubRoles, s.SoftwareStatus, s.States = patch.Enabled, *patch.Roles, *patch.SubRoles, *patch.SoftwareStatus, *patch.States
	}
	w.WriteHeader(http.StatusNoContent)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (h *fakeHSM) requests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.reqs...)
}

// set changes what h holds or knows under its lock.
func (h *fakeHSM) set(f func(h *fakeHSM)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(h)
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

// TestSubscribeHSMChecksItsSubscription: every client.DefaultHoldCheck,
// and when its subscribers' filters change, hmnfd finds its subscription
// in HSM's list by Subscriber and Url: gone (dropped after
// -scn-dead-after, deleted, HSM restarted on an empty database) it
// subscribes anew; its old ID now another daemon's (a restarted HSM
// numbers from 1 again) it does not PATCH that one (review-6), on either
// path; held as it should be, it sends nothing; a role HSM has come to
// know since is added; the hmnfd@hostname subscription of an older build
// to the same Url is deleted, or HSM would post every SCN twice.
func TestSubscribeHSMChecksItsSubscription(t *testing.T) {
	roles := "Application,Compute,Management,Service,Storage,System"
	post := "POST /hsm/v2/Subscriptions/SCN  " + roles
	bss := hsm.Subscription{ID: 7, Subscriber: "bss@ncn-m001:27778", Url: "http://bss/boot/v1/scn", Roles: []string{"Compute"}}
	gardener := Subscription{Roles: []string{"Gardener"}, Url: "http://n/x"}
	for _, tc := range []struct {
		name string
		// before, if set, is a subscriber of hmnfd from the start; change
		// is what happens to HSM after hmnfd subscribed (as ID 7), then
		// sub, if set, subscribes to hmnfd (else a minute passes).
		before *Subscription
		change func(h *fakeHSM)
		sub    *Subscription
		want   []string
		status string
		others []hsm.Subscription // HSM's subscriptions other than hmnfd's at the end
	}{
		{name: "gone", change: func(h *fakeHSM) { h.subs = nil }, want: []string{post, post}, status: "subscribed, ID 8"},
		{name: "its ID another daemon's", change: func(h *fakeHSM) { h.subs = []hsm.Subscription{bss} },
			want: []string{post, post}, status: "subscribed, ID 8", others: []hsm.Subscription{bss}},
		{name: "its ID another daemon's when a subscriber changes", change: func(h *fakeHSM) { h.subs, h.roles = []hsm.Subscription{bss}, nil },
			sub: &gardener, want: []string{post, "POST /hsm/v2/Subscriptions/SCN  Application,Compute,Gardener,Management,Service,Storage,System"},
			status: "subscribed, ID 8", others: []hsm.Subscription{bss}},
		{name: "held as it should be", change: func(*fakeHSM) {}, want: []string{post}, status: "subscribed, ID 7"},
		{name: "a role HSM knows now", before: &gardener, change: func(h *fakeHSM) { h.roles = nil },
			want:   []string{post, "PATCH /hsm/v2/Subscriptions/SCN/7 replace Application,Compute,Gardener,Management,Service,Storage,System"},
			status: "subscribed, ID 7"},
		{name: "held, with an older build's",
			change: func(h *fakeHSM) {
				h.subs = append(h.subs, hsm.Subscription{ID: 3, Subscriber: "hmnfd@ncn-m001", Url: "http://nfd/hmi/v1/scn"},
					hsm.Subscription{ID: 4, Subscriber: "hmnfd@other:1", Url: "http://x/scn"})
			},
			want: []string{post, "DELETE /hsm/v2/Subscriptions/SCN/3  "}, status: "subscribed, ID 7",
			others: []hsm.Subscription{{ID: 4, Subscriber: "hmnfd@other:1", Url: "http://x/scn"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// Gardener is not a role of this HSM until a case says so.
				hsmd := &fakeHSM{roles: []string{"Compute", "Service", "System", "Application", "Storage", "Management"}}
				svc, _ := openService(t, dbPath(t), Config{})
				if tc.before != nil {
					mustSubscribe(t, svc, Key{Component: "x1c0s0b0n0"}, *tc.before)
				}
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error)
				go func() {
					done <- svc.SubscribeHSM(ctx, &http.Client{Transport: handlerTransport{hsmd}}, "http://hsm:27779", "http://nfd/hmi/v1/scn", "hmnfd@test")
				}()
				synctest.Wait()
				hsmd.set(tc.change)
				if tc.sub != nil {
					mustSubscribe(t, svc, Key{Component: "x1c0s0b0n0"}, *tc.sub)
				} else {
					time.Sleep(client.DefaultHoldCheck)
				}
				synctest.Wait()
				time.Sleep(2 * client.DefaultHoldCheck) // and nothing more as long as nothing changes
				synctest.Wait()
				cancel()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, hsmd.requests()); diff != "" {
					t.Errorf("requests to HSM (-want +got):\n%s", diff)
				}
				if got := svc.hsmStatus.Load(); got != tc.status {
					t.Errorf("HSM status %q, want %q", got, tc.status)
				}
				others := slices.DeleteFunc(slices.Clone(hsmd.subs), func(s hsm.Subscription) bool { return s.Subscriber == "hmnfd@test" })
				if diff := cmp.Diff(tc.others, others, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("other subscriptions in HSM (-want +got):\n%s", diff)
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
