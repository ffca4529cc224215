package fanout

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/bus/bustest"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// scnMessages are n SCNs for comps components as HSM publishes them: one
// component each, keyed by xname, Seq 1..n.
// waitFor waits until cond holds, polling the real clock; it fails the test
// after a generous deadline so a hung test reports instead of stalling. Only
// the tests against a real Kafka-protocol broker (sockets, so no synctest
// bubble) use it.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-time.After(5 * time.Millisecond)
	}
}

func scnMessages(t testing.TB, n, comps int) []bus.Message {
	t.Helper()
	msgs := make([]bus.Message, n)
	for i := range n {
		comp := fmt.Sprintf("x1c0s%db0n%d", (i%comps)/8, i%8)
		state := "On"
		if i%3 == 0 {
			state = "Off"
		}
		scn := hsm.SCN{Components: []string{comp}, State: state, Seq: int64(i + 1), Timestamp: time.Now().UTC()}
		b, err := json.Marshal(scn)
		if err != nil {
			t.Fatal(err)
		}
		msgs[i] = bus.Message{Key: []byte(comp), Value: b}
	}
	return msgs
}

// delivered is what one subscriber path has received: distinct sequence
// numbers and the number of repeats.
func distinct(rc *receiver, path string) (seen map[int64]bool, dups int) {
	seen = map[int64]bool{}
	for _, s := range seqs(rc.deliveries(path)) {
		if seen[s] {
			dups++
		}
		seen[s] = true
	}
	return seen, dups
}

// inOrderPerComponent checks that the first arrival of each SCN is in Seq
// order per component.
func inOrderPerComponent(t *testing.T, rc *receiver, path string) {
	t.Helper()
	last := map[string]int64{}
	seen := map[int64]bool{}
	for _, d := range rc.deliveries(path) {
		ss := seqs([]delivery{d})
		for i, c := range d.Components {
			s := ss[min(i, len(ss)-1)]
			if seen[s] {
				continue
			}
			seen[s] = true
			if s < last[c] {
				t.Errorf("%s: component %s got Seq %d after %d", path, c, s, last[c])
			}
			last[c] = s
		}
	}
}

func TestRestartMidDeliveryLosesNothing(t *testing.T) {
	pg.EachDB(t, testRestartMidDeliveryLosesNothing)
}

func testRestartMidDeliveryLosesNothing(t *testing.T, db testpeer.DB) {
	const n = 300
	rc := newReceiver()
	var posts atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if posts.Add(1) > 40 { // after 40 posts the subscribers stall until released
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		rc.ServeHTTP(w, r)
	}))
	defer srv.Close()
	path := db(t)
	cfg := Config{RetryMin: time.Millisecond, RetryMax: 20 * time.Millisecond, BatchMax: 4}
	mem := bus.NewMemory()
	bustest.Publish(t, mem, bus.TopicSCN, scnMessages(t, n, 40), 50)

	store1, err := OpenStore(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	svc1, err := New(t.Context(), store1, cfg, quietLog(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		mustSubscribe(t, svc1, Key{Component: "x2c0s0b0n0", Agent: fmt.Sprint("a", i)},
			Subscription{States: []string{"On", "Off"}, Url: fmt.Sprintf("%s/s%d", srv.URL, i)})
	}
	stop1 := runService(t, svc1)
	m1 := bustest.StartMember(t, mem, bus.TopicSCN, "hmnfd", svc1.handleBatch)
	waitFor(t, "intake and stalled delivery", func() bool {
		return value(t, svc1.m.received.WithLabelValues("bus")) == n && posts.Load() >= 43 // each of the three senders has a request stalled
	})
	t.Log("killing")
	// Kill: stop consuming and delivering mid-request, close the database.
	m1.Stop(t)
	stop1()
	if err := store1.Close(); err != nil {
		t.Fatal(err)
	}
	close(release)
	t.Log("restarting")

	svc2, _ := openService(t, path, cfg)
	runService(t, svc2)
	bustest.StartMember(t, mem, bus.TopicSCN, "hmnfd", svc2.handleBatch)
	for i := range 3 {
		p := fmt.Sprintf("/s%d", i)
		waitFor(t, "every SCN at "+p, func() bool { seen, _ := distinct(rc, p); return len(seen) == n })
		_, dups := distinct(rc, p)
		t.Logf("%s: %d SCNs delivered, %d duplicates (identified by Seq)", p, n, dups)
		inOrderPerComponent(t, rc, p)
	}
}

func TestKafkaGroupRebalanceLosesNothing(t *testing.T) {
	const n, topic = 3000, "scn-rebalance"
	brokers := bustest.Kafka(t)
	newBus := func() *bus.Kafka {
		k, err := bus.NewKafka(bus.KafkaConfig{Brokers: brokers, HeartbeatInterval: 200 * time.Millisecond,
			Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { k.Close() })
		return k
	}
	rc := newReceiver()
	srv := httptest.NewServer(rc)
	defer srv.Close()
	cfg := Config{RetryMin: time.Millisecond, RetryMax: 20 * time.Millisecond}
	start := func() (*Service, *bustest.Member) {
		svc, _ := openService(t, dbPath(t), cfg)
		mustSubscribe(t, svc, Key{Component: "x2c0s0b0n0", Agent: "all"}, Subscription{States: []string{"On", "Off"}, Url: srv.URL + "/all"})
		runService(t, svc)
		return svc, bustest.StartMember(t, newBus(), topic, "hmnfd", svc.handleBatch)
	}
	msgs := scnMessages(t, n, 96)
	producer := newBus()
	_, m1 := start()
	bustest.Publish(t, producer, topic, msgs[:1000], 100)
	waitFor(t, "first member working", func() bool { return len(rc.deliveries("/all")) >= 300 })
	start() // the group rebalances onto two members
	bustest.Publish(t, producer, topic, msgs[1000:2000], 100)
	waitFor(t, "both members", func() bool { s, _ := distinct(rc, "/all"); return len(s) >= 1500 })
	m1.Stop(t) // and back to one
	bustest.Publish(t, producer, topic, msgs[2000:], 100)
	waitFor(t, "every SCN", func() bool { s, _ := distinct(rc, "/all"); return len(s) == n })
	seen, dups := distinct(rc, "/all")
	var missing []int64
	for s := int64(1); s <= n; s++ {
		if !seen[s] {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		t.Errorf("missing Seqs %v", missing)
	}
	t.Logf("%d SCNs through a rebalancing group of two: %d duplicates", n, dups)
}
