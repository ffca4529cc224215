package scn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/bus/bustest"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
	"github.com/hmsuite/hms/statemgr/scn"
)

// TestRelayKafka publishes bulk-update SCNs through a real Kafka client to
// an in-process Kafka-protocol broker (kfake) and reads them back.
func TestRelayKafka(t *testing.T) { pg.EachDB(t, testRelayKafka) }

func testRelayKafka(t *testing.T, db testpeer.DB) {
	s, _ := hsmtest.NewStoreOn(t, db, core.Config{})
	ctx := t.Context()
	comps := hsmtest.Nodes(64, 1)
	if err := component.NewStore(s).UpsertComponents(ctx, comps, false, nil); err != nil {
		t.Fatal(err)
	}
	k, err := bus.NewKafka(bus.KafkaConfig{Brokers: bustest.Kafka(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	for _, st := range []string{"On", "Ready"} {
		if _, err := component.NewStore(s).UpdateState(ctx, hsmtest.IDsOf(comps), component.StateUpdate{State: st}); err != nil {
			t.Fatal(err)
		}
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	go scn.NewRelay(scn.NewStore(s), scn.RelayConfig{Publisher: k, Topic: "scn-test", After: never}).Run(rctx)

	rec := bustest.NewRecorder(2 * len(comps))
	bustest.StartMember(t, k, "scn-test", "test", rec.Handle)
	rec.Wait(t)
	seen := map[string]bool{}
	for _, m := range rec.Messages() {
		var scn hsm.SCN
		if err := json.Unmarshal(m.Value, &scn); err != nil {
			t.Fatal(err)
		}
		if len(scn.Components) != 1 || scn.Components[0] != string(m.Key) || scn.Seq == 0 || scn.Timestamp.IsZero() {
			t.Fatalf("bad message key=%s %s", m.Key, m.Value)
		}
		seen[fmt.Sprintf("%d/%s/%s", scn.Seq, scn.Components[0], scn.State)] = true
	}
	for i, c := range comps {
		for seq, st := range map[int]string{1: "On", 2: "Ready"} {
			if key := fmt.Sprintf("%d/%s/%s", seq, c.ID, st); !seen[key] {
				t.Fatalf("component %d: missing %s", i, key)
			}
		}
	}
}

// TestRelayKafkaKcat reads what the relay published with kcat (librdkafka),
// a client that shares no code with ours.
func TestRelayKafkaKcat(t *testing.T) { pg.EachDB(t, testRelayKafkaKcat) }

func testRelayKafkaKcat(t *testing.T, db testpeer.DB) {
	kcat := testpeer.Require(t, "kcat")
	s, _ := hsmtest.NewStoreOn(t, db, core.Config{})
	ctx := t.Context()
	comps := hsmtest.Nodes(5, 1)
	if err := component.NewStore(s).UpsertComponents(ctx, comps, false, nil); err != nil {
		t.Fatal(err)
	}
	brokers := bustest.Kafka(t)
	k, err := bus.NewKafka(bus.KafkaConfig{Brokers: brokers, Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	if _, err := component.NewStore(s).UpdateState(ctx, hsmtest.IDsOf(comps), component.StateUpdate{State: "On"}); err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	published := make(chan struct{})
	rec := newRecorder(len(comps))
	rec.done = published
	go scn.NewRelay(scn.NewStore(s), scn.RelayConfig{Publisher: teePub{k, rec}, Topic: bus.TopicSCN, After: never}).Run(rctx)
	waitFor(t, published, "publish to kfake")
	out, err := exec.CommandContext(ctx, kcat, "-C", "-b", brokers[0], "-t", bus.TopicSCN, "-o", "beginning", "-e",
		"-q", "-f", "%k %s\n").Output()
	if err != nil {
		t.Fatalf("kcat: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(comps) {
		t.Fatalf("kcat read %d messages, want %d:\n%s", len(lines), len(comps), out)
	}
	for _, l := range lines {
		key, val, _ := strings.Cut(l, " ")
		var scn hsm.SCN
		if err := json.Unmarshal([]byte(val), &scn); err != nil || scn.Components[0] != key || scn.State != "On" || scn.Seq != 1 {
			t.Errorf("kcat line %q does not decode to the SCN for %s", l, key)
		}
	}
}

// teePub publishes to a then b.
type teePub struct{ a, b bus.Publisher }

func (p teePub) Publish(ctx context.Context, topic string, msgs ...bus.Message) error {
	if err := p.a.Publish(ctx, topic, msgs...); err != nil {
		return err
	}
	return p.b.Publish(ctx, topic, msgs...)
}
