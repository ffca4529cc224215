package integration

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/heartbeat"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/statemgr"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/scn"
)

// TestHeartbeatsDriveHSMState runs a real hsm and a real hbtd: a node that
// beats becomes Ready, one that falls silent is warned and then put in
// Standby, and one that resumes is Ready again, with an SCN on the bus for
// each change.
func TestHeartbeatsDriveHSMState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		dir := t.TempDir()
		const node = "x3000c0s1b0n0"

		store, err := statemgr.OpenStore(ctx, filepath.Join(dir, "hsm.db"), statemgr.StoreConfig{})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		mem := bus.NewMemory()
		hsmh := statemgr.NewAPI(store, discard(), nil).Handler()
		relay := statemgr.NewRelay(store, scn.RelayConfig{Publisher: mem, Topic: bus.TopicSCN, Log: discard()})
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		wg.Go(func() { _ = relay.Run(ctx) })

		var mu sync.Mutex
		var scns []hsm.SCN
		wg.Go(func() {
			_ = mem.Consume(ctx, bus.TopicSCN, "test", func(_ context.Context, msgs []bus.Message) error {
				mu.Lock()
				defer mu.Unlock()
				for _, m := range msgs {
					var s hsm.SCN
					if err := json.Unmarshal(m.Value, &s); err != nil {
						t.Errorf("SCN on the bus is not JSON: %v", err)
					}
					scns = append(scns, s)
				}
				return nil
			})
		})

		hsmClient := client.New("http://hsm", clientFor(hsmh), "")
		if err := hsmClient.PostComponents(ctx, []hsm.Component{{ID: node, Type: "Node", State: "On"}}, false); err != nil {
			t.Fatalf("create node in hsm: %v", err)
		}

		svc, err := heartbeat.New(ctx, heartbeat.Options{
			DBPath: filepath.Join(dir, "hbtd.db"), HSMURL: "http://hsm", HTTPClient: clientFor(hsmh),
			Publisher: mem, Warntime: 10 * time.Second, Errtime: 30 * time.Second, Log: discard(),
		})
		if err != nil {
			t.Fatal(err)
		}
		defer svc.Close()
		wg.Go(func() { _ = svc.Run(ctx) })
		hbtd := heartbeat.NewAPI(svc, discard()).Handler()

		beat := func() {
			t.Helper()
			code, body := do(t, hbtd, "POST", "/hmi/v1/heartbeat", map[string]any{
				"Component": node, "Hostname": "nid000001", "NID": "1", "Status": "OK",
				"TimeStamp": time.Now().UTC().Format(time.RFC3339),
			})
			if code != 200 {
				t.Fatalf("heartbeat: %d %s", code, body)
			}
		}
		stateOf := func() (string, string) {
			t.Helper()
			synctest.Wait()
			c, err := hsmClient.Component(ctx, node)
			if err != nil {
				t.Fatal(err)
			}
			return c.State, c.Flag
		}
		want := func(step, state, flag string) {
			t.Helper()
			if s, f := stateOf(); s != state || f != flag {
				t.Fatalf("%s: hsm has %s/%s, want %s/%s", step, s, f, state, flag)
			}
		}

		for range 4 { // beating every 3 s
			beat()
			time.Sleep(3 * time.Second) // fake clock inside the bubble
		}
		want("beating", "Ready", "OK")

		time.Sleep(9 * time.Second) // 12 s since the last beat: past Warntime
		want("late", "Ready", "Warning")

		time.Sleep(20 * time.Second) // 32 s: past Errtime
		want("silent", "Standby", "Alert")

		beat()
		want("resumed", "Ready", "OK")

		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		type change struct{ State, Flag string }
		var got []change
		for _, s := range scns {
			if len(s.Components) != 1 || s.Components[0] != node {
				t.Fatalf("SCN for %v, want only %s", s.Components, node)
			}
			got = append(got, change{s.State, s.Flag})
		}
		wantSCN := []change{{"Ready", "OK"}, {"Ready", "Warning"}, {"Standby", "Alert"}, {"Ready", "OK"}}
		if d := cmp.Diff(wantSCN, got); d != "" {
			t.Fatalf("SCNs (-want +got):\n%s", d)
		}
	})
}

// TestUnknownNodeDoesNotBlockOthers: HSM refuses a whole BulkStateData for a
// component it does not have; hbtd must still get the state changes of the
// nodes HSM knows through, for a batch that mixes both.
func TestUnknownNodeDoesNotBlockOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		dir := t.TempDir()
		known := []string{"x3000c0s1b0n0", "x3000c0s2b0n0", "x3000c0s3b0n0"}
		const unknown = "x3000c0s9b0n0"

		store, err := statemgr.OpenStore(ctx, filepath.Join(dir, "hsm.db"), statemgr.StoreConfig{})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		hsmh := statemgr.NewAPI(store, discard(), nil).Handler()
		hsmClient := client.New("http://hsm", clientFor(hsmh), "")
		var comps []hsm.Component
		for _, id := range known {
			comps = append(comps, hsm.Component{ID: id, Type: "Node", State: "On"})
		}
		if err := hsmClient.PostComponents(ctx, comps, false); err != nil {
			t.Fatal(err)
		}
		svc, err := heartbeat.New(ctx, heartbeat.Options{DBPath: filepath.Join(dir, "hbtd.db"), HSMURL: "http://hsm",
			HTTPClient: clientFor(hsmh), Log: discard()})
		if err != nil {
			t.Fatal(err)
		}
		defer svc.Close()
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		wg.Go(func() { _ = svc.Run(ctx) })

		var batch []map[string]any
		for _, id := range append([]string{unknown}, known...) {
			batch = append(batch, map[string]any{"Component": id, "Status": "OK", "TimeStamp": time.Now().UTC().Format(time.RFC3339)})
		}
		if code, body := do(t, heartbeat.NewAPI(svc, discard()).Handler(), "POST", "/hmi/v1/heartbeats", batch); code != 200 {
			t.Fatalf("heartbeats: %d %s", code, body)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		for _, id := range known {
			c, err := hsmClient.Component(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if c.State != "Ready" {
				t.Errorf("%s is %s in HSM, want Ready despite %s in the same batch", id, c.State, unknown)
			}
		}
		if n := svc.HSM.Pending(); n != 0 {
			t.Errorf("%d changes still pending for HSM; the unknown node's should be dropped, not retried", n)
		}
	})
}
