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
				rc := newReceiver()
				svc, store := openService(t, dbPath(t), bubbleConfig(rc))
				const node = "x1c0s0b0n0"
				mustSubscribe(t, svc, Key{Component: node, Agent: "a"}, Subscription{States: []string{"Ready"}, Url: "http://a/scn"})
				rc.set(func() { rc.status["/scn"] = tc.status })
				runService(t, svc)
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
				code, body := apiDo(t, svc, "GET", "/hmi/v2/deadletters")
				var list DeadLetterList
				if err := json.Unmarshal(body, &list); code != 200 || err != nil {
					t.Fatalf("GET /hmi/v2/deadletters: %d %s", code, body)
				}
				if len(list.DeadLetters) != wantDead {
					t.Fatalf("dead letters %s; want %d", body, wantDead)
				}
				if got := value(t, svc.m.deadLetters.WithLabelValues("http://a/scn")); got != float64(wantDead) {
					t.Errorf("hmnfd_dead_letters_total = %v, want %d", got, wantDead)
				}
				if tc.dead {
					d := list.DeadLetters[0]
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
		rc := newReceiver()
		cfg := bubbleConfig(rc)
		cfg.DeadLetterAge = time.Hour
		svc, store := openService(t, dbPath(t), cfg)
		const node = "x1c0s0b0n0"
		mustSubscribe(t, svc, Key{Component: node, Agent: "a"}, Subscription{States: []string{"Ready"}, Url: "http://a/scn"})
		rc.set(func() { rc.status["/scn"] = http.StatusBadRequest })
		runService(t, svc)
		listed := func() []int64 {
			t.Helper()
			code, body := apiDo(t, svc, "GET", "/hmi/v2/deadletters")
			var list DeadLetterList
			if err := json.Unmarshal(body, &list); code != 200 || err != nil {
				t.Fatalf("GET /hmi/v2/deadletters: %d %s", code, body)
			}
			var seqs []int64
			for _, d := range list.DeadLetters {
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

// apiDo serves one request to svc's API in memory (no socket, so it works
// inside a synctest bubble) and returns the status and body.
func apiDo(t *testing.T, svc *Service, method, path string) (int, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	NewAPI(svc, quietLog(), Params{Port: 28600}, nil).Handler().ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Code, rec.Body.Bytes()
}
