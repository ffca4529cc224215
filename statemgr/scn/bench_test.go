package scn_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/bus/bustest"
	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
	"github.com/hmsuite/hms/statemgr/scn"
)

// BenchmarkRelayKafka100k: one BulkStateData of 100,000 IDs relayed to Kafka
// (kfake on loopback), one message per component.
func BenchmarkRelayKafka100k(b *testing.B) {
	s, _ := hsmtest.NewStore(b, core.Config{})
	comps := hsmtest.Nodes(100_000, 1000)
	if err := component.NewStore(s).UpsertComponents(b.Context(), comps, false, nil); err != nil {
		b.Fatal(err)
	}
	k, err := bus.NewKafka(bus.KafkaConfig{Brokers: bustest.Kafka(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { k.Close() })
	ids := hsmtest.IDsOf(comps)
	// Start from all Off with the bus cursor past it, so every round changes
	// every component.
	if _, err := component.NewStore(s).UpdateState(b.Context(), ids, component.StateUpdate{State: "Off", Force: true}); err != nil {
		b.Fatal(err)
	}
	rows, _ := s.OutboxAfter(b.Context(), 0, 1000)
	if err := s.SetCursor(b.Context(), "bus", rows[len(rows)-1].Seq); err != nil {
		b.Fatal(err)
	}
	states := []string{"Ready", "Off"}
	var cpu time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		if _, err := component.NewStore(s).UpdateState(b.Context(), ids, component.StateUpdate{State: states[i%2], Force: true}); err != nil {
			b.Fatal(err)
		}
		cnt := &countPub{next: k, want: int64(len(ids)), done: make(chan struct{})}
		ctx, stop := context.WithCancel(b.Context())
		c0 := hsmtest.CPUTime()
		b.StartTimer()
		go scn.NewRelay(scn.NewStore(s), scn.RelayConfig{Publisher: cnt, After: never}).Run(ctx)
		<-cnt.done
		b.StopTimer()
		cpu += hsmtest.CPUTime() - c0
		stop()
		b.StartTimer()
	}
	b.ReportMetric(float64(len(ids))*float64(b.N)/b.Elapsed().Seconds(), "scn/s")
	b.ReportMetric(float64(len(ids))*float64(b.N)/cpu.Seconds(), "scn/cpu-s")
}

type countPub struct {
	next bus.Publisher
	n    atomic.Int64
	want int64
	done chan struct{}
}

func (c *countPub) Publish(ctx context.Context, topic string, msgs ...bus.Message) error {
	if err := c.next.Publish(ctx, topic, msgs...); err != nil {
		return err
	}
	if c.n.Add(int64(len(msgs))) >= c.want {
		select {
		case <-c.done:
		default:
			close(c.done)
		}
	}
	return nil
}
