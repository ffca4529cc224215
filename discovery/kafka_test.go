package discovery

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/bus/bustest"
	"github.com/hmsuite/hms/internal/sealed"
	"github.com/hmsuite/hms/ipxe/lease"
	slsclient "github.com/hmsuite/hms/layout/client"
	"github.com/hmsuite/hms/statemgr/client"
)

// TestLeasesFromKafka: a standalone reds takes lease events from Kafka (a
// kfake broker), as its consumer group; an unknown MAC with no switch in
// reach ends unknown, which proves the event arrived and was acted on.
func TestLeasesFromKafka(t *testing.T) {
	k, err := bus.NewKafka(bus.KafkaConfig{Brokers: bustest.Kafka(t), ClientID: "reds", Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	dir := t.TempDir()
	box, err := sealed.LoadKey(filepath.Join(dir, "key"))
	if err != nil {
		t.Fatal(err)
	}
	store, err := OpenStore(t.Context(), filepath.Join(dir, "reds.db"), box, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	done := make(chan outcome, 4)
	svc := New(Config{HSM: client.New("http://127.0.0.1:1", nil, "reds"), SLS: slsclient.New("http://127.0.0.1:1", nil),
		Store: store, BMCs: NewBMCs(BMCConfig{}), Walker: NewSNMPWalker(SNMPConfig{}), Bus: k, River: true,
		HSMPoll: time.Hour, PresenceInterval: time.Hour, Done: func(o Outcome) { done <- outcome{mac: o.MAC, xname: o.Xname, err: o.Err} }})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- svc.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Error(err)
		}
	}()
	v, _ := lease.Encode(lease.Event{Kind: lease.Commit, MACAddress: "02:00:00:00:00:07", IPAddress: "10.254.1.7", Time: time.Now()})
	if err := k.Publish(t.Context(), lease.Topic, bus.Message{Key: []byte(lease.Key("02:00:00:00:00:07")), Value: v}); err != nil {
		t.Fatal(err)
	}
	select {
	case o := <-done:
		if o.mac != "02:00:00:00:00:07" || o.err == nil {
			t.Fatalf("outcome %+v", o)
		}
	case <-time.After(time.Minute):
		t.Fatal("no lease event consumed from Kafka within a minute")
	}
	if u := svc.Unknowns(); len(u) != 1 || u[0].Reason != ReasonNotOnSwitch {
		t.Errorf("unknown %+v", u)
	}
}
