package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/fanout"
	"github.com/hmsuite/hms/statemgr"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/scn"
)

// TestHSMCallbacksReachHmnfdSubscribers runs a real hsm and a real hmnfd in
// HSM-callback mode (no Kafka): hmnfd subscribes to HSM's /Subscriptions/SCN
// with the values HSM accepts, HSM POSTs state changes to hmnfd, and hmnfd
// delivers the ones a node's agent asked for.
func TestHSMCallbacksReachHmnfdSubscribers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		dir := t.TempDir()
		const node, other = "x3000c0s1b0n0", "x3000c0s2b0n0"
		hosts := hostTransport{}
		net := &http.Client{Transport: hosts}

		var mu sync.Mutex
		var got []hsm.SCN
		hosts["node"] = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var s hsm.SCN
			if err := json.NewDecoder(r.Body).Decode(&s); err != nil {
				t.Errorf("subscriber got a body that is not an SCN: %v", err)
			}
			mu.Lock()
			got = append(got, s)
			mu.Unlock()
		})

		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		svc := startCallbackSuite(ctx, t, dir, hosts, &wg)
		subCtx, stopSub := context.WithCancel(ctx)
		wg.Go(func() { _ = svc.SubscribeHSM(subCtx, net, "http://hsm", "http://hmnfd/hmi/v1/scn", "hmnfd@test") })

		// A node's agent asks to hear when node goes Off; a subrole HSM does
		// not know must not break hmnfd's own subscription to HSM.
		code, body := do(t, hosts["hmnfd"], "POST", "/hmi/v2/subscriptions/x3000c0s9b0n0/agents/watcher", fanout.Subscription{
			Components: []string{node}, States: []string{"Off"}, SubRoles: []string{"UAN"}, Url: "http://node/scn",
		})
		if code/100 != 2 {
			t.Fatalf("subscribe: %d %s", code, body)
		}
		synctest.Wait()
		code, body = do(t, hosts["hsm"], "GET", "/hsm/v2/Subscriptions/SCN", nil)
		var list hsm.SubscriptionList
		if err := json.Unmarshal(body, &list); code != 200 || err != nil || len(list.SubscriptionList) != 1 {
			t.Fatalf("hmnfd is not subscribed to hsm: %d %s", code, body)
		}

		hc := client.New("http://hsm", net, "")
		if err := hc.PostComponents(ctx, []hsm.Component{
			{ID: node, Type: "Node", State: "On"}, {ID: other, Type: "Node", State: "On"},
		}, false); err != nil {
			t.Fatal(err)
		}
		if err := hc.BulkStateData(ctx, []string{node, other}, "Off", "", false, nil); err != nil {
			t.Fatal(err)
		}
		if err := hc.StateData(ctx, node, "On", "", false); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()

		// hmnfd restarts: it finds its subscription (and HSM's cursor for it)
		// instead of failing on a duplicate or adding a second one.
		stopSub()
		wg.Go(func() { _ = svc.SubscribeHSM(ctx, net, "http://hsm", "http://hmnfd/hmi/v1/scn", "hmnfd@test") })
		synctest.Wait()
		code, body = do(t, hosts["hsm"], "GET", "/hsm/v2/Subscriptions/SCN", nil)
		if err := json.Unmarshal(body, &list); code != 200 || err != nil || len(list.SubscriptionList) != 1 {
			t.Fatalf("subscriptions after the restart: %d %s; want hmnfd's one", code, body)
		}
		if code, body = do(t, hosts["hmnfd"], "GET", "/hmi/v1/health", nil); !bytes.Contains(body, []byte(fmt.Sprintf("subscribed, ID %d", list.SubscriptionList[0].ID))) {
			t.Errorf("hmnfd health after the restart: %d %s; want subscribed with ID %d", code, body, list.SubscriptionList[0].ID)
		}

		mu.Lock()
		defer mu.Unlock()
		type seen struct {
			Components []string
			State      string
		}
		var gotSeen []seen
		for _, s := range got {
			gotSeen = append(gotSeen, seen{s.Components, s.State})
		}
		want := []seen{{[]string{node}, "Off"}}
		if d := cmp.Diff(want, gotSeen); d != "" {
			t.Fatalf("subscriber notifications (-want +got):\n%s", d)
		}
	})
}

// startCallbackSuite opens a real hsm (host "hsm") and a real hmnfd (host
// "hmnfd") in HSM-callback mode, with their databases in dir, and runs
// HSM's relay and hmnfd's senders in wg until ctx ends; the caller starts
// hmnfd's SubscribeHSM.
func startCallbackSuite(ctx context.Context, t *testing.T, dir string, hosts hostTransport, wg *sync.WaitGroup) *fanout.Service {
	t.Helper()
	net := &http.Client{Transport: hosts}
	store, err := statemgr.OpenStore(ctx, filepath.Join(dir, "hsm.db"), statemgr.StoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	hosts["hsm"] = statemgr.NewAPI(store, discard(), nil).Handler()
	relay := statemgr.NewRelay(store, scn.RelayConfig{Client: net, Log: discard()})

	nstore, err := fanout.OpenStore(ctx, filepath.Join(dir, "hmnfd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nstore.Close() })
	cfg := fanout.DefaultConfig()
	cfg.Client = net
	svc, err := fanout.New(ctx, nstore, cfg, discard(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	params := fanout.StartParams(":28600", "hmnfd.db", "http://hsm", "http://hmnfd/hmi/v1/scn", nil, "")
	hosts["hmnfd"] = fanout.NewAPI(svc, discard(), params, nil).Handler()
	wg.Go(func() { _ = relay.Run(ctx) })
	wg.Go(func() { _ = svc.Run(ctx) })
	return svc
}
