package fanout

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// TestRefusedDeliveryIsDeadLettered: an SCN a subscriber refuses for good
// (4xx other than 408/429) is set aside - stored, listed at
// /hmi/v2/deadletters, counted - and the SCNs after it are delivered; one
// refused with 408, 429 or 5xx is retried until the subscriber takes it.
func TestRefusedDeliveryIsDeadLettered(t *testing.T) {
	for _, tc := range []struct {
		status int
		dead   bool
	}{
		{status: http.StatusRequestEntityTooLarge, dead: true},
		{status: http.StatusBadRequest, dead: true},
		{status: http.StatusNotFound, dead: true},
		{status: http.StatusRequestTimeout},
		{status: http.StatusTooManyRequests},
		{status: http.StatusServiceUnavailable},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				svc, store, rc := refusingSubscriber(t, bubbleConfig, tc.status)
				const node = deadLetterNode
				enqueueStates(t, svc, 1, 1, node, "Ready")
				synctest.Wait()
				rc.set(func() { rc.status["/scn"] = 0 })
				enqueueStates(t, svc, 2, 5, node, "Ready")
				time.Sleep(time.Minute) // longer than RetryMax: a retried SCN goes out
				synctest.Wait()

				want, wantDead := seqRange(1, 5), 0
				if tc.dead {
					want, wantDead = seqRange(2, 5), 1
				}
				if diff := cmp.Diff(want, seqs(rc.deliveries("/scn"))); diff != "" {
					t.Errorf("subscriber got (-want +got):\n%s", diff)
				}
				dead := listDeadLetters(t, svc)
				if len(dead) != wantDead {
					t.Fatalf("dead letters %+v; want %d", dead, wantDead)
				}
				if got := value(t, svc.m.deadLetters.WithLabelValues("http://a/scn")); got != float64(wantDead) {
					t.Errorf("hmnfd_dead_letters_total = %v, want %d", got, wantDead)
				}
				if tc.dead {
					d := dead[0]
					var scn hsm.SCN
					if err := json.Unmarshal(d.SCN, &scn); err != nil || scn.Seq != 1 || d.Url != "http://a/scn" {
						t.Errorf("dead letter %+v (SCN %+v, %v); want SCN 1 to http://a/scn", d, scn, err)
					}
				}
				if n := storedSCNs(t, store); n != 0 {
					t.Errorf("%d SCN bodies left queued, want none", n)
				}
			})
		})
	}
}

// TestRefusedBatchIsSentOneByOne: a batch of SCNs refused as a whole (413:
// too large together) is sent again one SCN at a time, so nothing is lost.
func TestRefusedBatchIsSentOneByOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newReceiver()
		cfg := bubbleConfig(rc)
		cfg.BatchMax = 8
		svc, _ := openService(t, dbPath(t), cfg)
		const node = "x1c0s0b0n0"
		mustSubscribe(t, svc, Key{Component: node, Agent: "a"}, Subscription{States: []string{"Ready"}, Url: "http://a/scn"})
		rc.set(func() { rc.down["/scn"] = true; rc.maxComps["/scn"] = 1 })
		runService(t, svc)
		enqueueStates(t, svc, 1, 5, node, "Ready") // queued while down: batched when it is back
		synctest.Wait()
		rc.set(func() { rc.down["/scn"] = false })
		time.Sleep(time.Minute)
		synctest.Wait()
		if diff := cmp.Diff(seqRange(1, 5), seqs(rc.deliveries("/scn"))); diff != "" {
			t.Errorf("subscriber got (-want +got):\n%s", diff)
		}
		if got := value(t, svc.m.deadLetters.WithLabelValues("http://a/scn")); got != 0 {
			t.Errorf("hmnfd_dead_letters_total = %v, want 0", got)
		}
	})
}

// TestDeadLettersAgeOut: dead letters older than DeadLetterAge are no
// longer listed, and are deleted when the next one is stored.
func TestDeadLettersAgeOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, store, _ := refusingSubscriber(t, func(rc *receiver) Config {
			cfg := bubbleConfig(rc)
			cfg.DeadLetterAge = time.Hour
			return cfg
		}, http.StatusBadRequest)
		const node = deadLetterNode
		listed := func() []int64 {
			t.Helper()
			var seqs []int64
			for _, d := range listDeadLetters(t, svc) {
				var scn hsm.SCN
				if err := json.Unmarshal(d.SCN, &scn); err != nil {
					t.Fatal(err)
				}
				seqs = append(seqs, scn.Seq)
			}
			return seqs
		}
		stored := func() int {
			t.Helper()
			var n int
			if err := store.db.R.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM deadletters`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		enqueueStates(t, svc, 1, 1, node, "Ready")
		synctest.Wait()
		time.Sleep(45 * time.Minute)
		enqueueStates(t, svc, 2, 2, node, "Ready")
		synctest.Wait()
		if got := listed(); !cmp.Equal(got, []int64{1, 2}) {
			t.Errorf("dead letters after 45 min = %v, want [1 2]", got)
		}
		time.Sleep(30 * time.Minute) // the first is 75 min old
		if got := listed(); !cmp.Equal(got, []int64{2}) {
			t.Errorf("dead letters after 75 min = %v, want [2]", got)
		}
		if n := stored(); n != 2 {
			t.Errorf("%d dead letters stored before the next one, want 2", n)
		}
		enqueueStates(t, svc, 3, 3, node, "Ready")
		synctest.Wait()
		if got, n := listed(), stored(); !cmp.Equal(got, []int64{2, 3}) || n != 2 {
			t.Errorf("after the next dead letter: listed %v, %d stored; want [2 3], 2", got, n)
		}
	})
}

// deadLetterNode is the subscriber of the dead letter tests.
const deadLetterNode = "x1c0s0b0n0"

// refusingSubscriber runs svc with one subscriber, http://a/scn, watching
// deadLetterNode go Ready, that answers status (0: 200).
func refusingSubscriber(t *testing.T, cfg func(*receiver) Config, status int) (*Service, *Store, *receiver) {
	t.Helper()
	rc := newReceiver()
	svc, store := openService(t, dbPath(t), cfg(rc))
	mustSubscribe(t, svc, Key{Component: deadLetterNode, Agent: "a"}, Subscription{States: []string{"Ready"}, Url: "http://a/scn"})
	rc.set(func() { rc.status["/scn"] = status })
	runService(t, svc)
	return svc, store, rc
}

// listDeadLetters is GET /hmi/v2/deadletters.
func listDeadLetters(t *testing.T, svc *Service) []DeadLetter {
	t.Helper()
	code, body := apiDo(t, svc, "GET", "/hmi/v2/deadletters")
	var list DeadLetterList
	if err := json.Unmarshal(body, &list); code != 200 || err != nil {
		t.Fatalf("GET /hmi/v2/deadletters: %d %s", code, body)
	}
	return list.DeadLetters
}

// apiDo serves one request to svc's API in memory (no socket, so it works
// inside a synctest bubble) and returns the status and body.
func apiDo(t *testing.T, svc *Service, method, path string) (int, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	NewAPI(svc, quietLog(), Params{Port: 28600}, nil).Handler().ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Code, rec.Body.Bytes()
}

// TestDeleteDeadLetters: an admin deletes one dead letter by its ID (204;
// 404 problem for one that is not listed, 400 for a malformed ID) or all of
// them (204, also when there are none).
func TestDeleteDeadLetters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, _, _ := refusingSubscriber(t, bubbleConfig, http.StatusBadRequest)
		enqueueStates(t, svc, 1, 3, deadLetterNode, "Ready")
		synctest.Wait()
		listed := func() []int64 {
			t.Helper()
			var ids []int64
			for _, d := range listDeadLetters(t, svc) {
				ids = append(ids, d.ID)
			}
			return ids
		}
		ids := listed()
		if len(ids) != 3 {
			t.Fatalf("dead letters %v, want 3", ids)
		}
		one := fmt.Sprintf("/hmi/v2/deadletters/%d", ids[1])
		steps := []struct {
			path       string
			wantStatus int
			wantType   string
			wantLeft   []int64
		}{
			{path: one, wantStatus: http.StatusNoContent, wantLeft: []int64{ids[0], ids[2]}},
			{path: one, wantStatus: http.StatusNotFound, wantType: "application/problem+json", wantLeft: []int64{ids[0], ids[2]}},
			{path: "/hmi/v2/deadletters/x", wantStatus: http.StatusBadRequest, wantType: "application/problem+json", wantLeft: []int64{ids[0], ids[2]}},
			{path: "/hmi/v2/deadletters/0", wantStatus: http.StatusBadRequest, wantType: "application/problem+json", wantLeft: []int64{ids[0], ids[2]}},
			{path: "/hmi/v2/deadletters", wantStatus: http.StatusNoContent},
			{path: "/hmi/v2/deadletters", wantStatus: http.StatusNoContent},
		}
		for _, s := range steps {
			rec := httptest.NewRecorder()
			NewAPI(svc, quietLog(), Params{}, nil).Handler().ServeHTTP(rec, httptest.NewRequest("DELETE", s.path, nil))
			if rec.Code != s.wantStatus || rec.Header().Get("Content-Type") != s.wantType {
				t.Errorf("DELETE %s: %d %q %s; want %d %q", s.path, rec.Code, rec.Header().Get("Content-Type"), rec.Body, s.wantStatus, s.wantType)
			}
			if got := listed(); !cmp.Equal(got, s.wantLeft) {
				t.Errorf("after DELETE %s: listed %v, want %v", s.path, got, s.wantLeft)
			}
		}
	})
}
