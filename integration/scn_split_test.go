package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/hmsuite/hms/fanout"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// TestBulkChangeReachesHmnfdSubscriberInOrder: a bulk change of 25,000
// components, which HSM splits into SCNs of at most 10,000, reaches an
// hmnfd subscriber completely and in order, with increasing Seqs.
func TestBulkChangeReachesHmnfdSubscriberInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		hosts := hostTransport{}
		net := &http.Client{Transport: hosts}
		var mu sync.Mutex
		var gotIDs []string
		var gotSeqs []int64
		hosts["node"] = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var d struct {
				hsm.SCN
				Seqs []int64
			}
			if err := json.NewDecoder(r.Body).Decode(&d); err != nil {
				t.Errorf("subscriber got a body that is not an SCN: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			gotIDs = append(gotIDs, d.Components...)
			if len(d.Seqs) == 0 {
				d.Seqs = []int64{d.Seq}
			}
			gotSeqs = append(gotSeqs, d.Seqs...)
		})
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		svc := startCallbackSuite(ctx, t, t.TempDir(), hosts, &wg)
		wg.Go(func() { _ = svc.SubscribeHSM(ctx, net, "http://hsm", "http://hmnfd/hmi/v1/scn", "hmnfd@test") })
		comps := make([]hsm.Component, 25_000)
		ids := make([]string, len(comps))
		for i := range comps {
			ids[i] = fmt.Sprintf("x%dc0s%db0n%d", 1000+i/512, i/8%64, i%8)
			comps[i] = hsm.Component{ID: ids[i], Type: "Node", State: "On"}
		}
		// A v2 subscription names its components (hmnfd refuses one without).
		code, body := do(t, hosts["hmnfd"], "POST", "/hmi/v2/subscriptions/x3000c0s9b0n0/agents/watcher",
			fanout.Subscription{States: []string{"Ready"}, Components: ids, Url: "http://node/scn"})
		if code/100 != 2 {
			t.Fatalf("subscribe: %d %s", code, body)
		}
		synctest.Wait()

		hc := client.New("http://hsm", net, "")
		if err := hc.PostComponents(ctx, comps, false); err != nil {
			t.Fatal(err)
		}
		if err := hc.BulkStateData(ctx, ids, "Ready", "", false, nil); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()

		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(ids, gotIDs) {
			t.Errorf("subscriber got %d components, want all %d in the order of the change", len(gotIDs), len(ids))
		}
		if len(gotSeqs) != 3 || !slices.IsSorted(gotSeqs) || gotSeqs[0] == gotSeqs[1] || gotSeqs[1] == gotSeqs[2] {
			t.Errorf("Seqs %v; want the three increasing Seqs of the pieces", gotSeqs)
		}
	})
}
