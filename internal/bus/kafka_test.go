package bus_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/bus/bustest"
	"github.com/hmsuite/hms/internal/problem"
)

// newKafka returns a Kafka bus on brokers that logs warnings to stderr and is
// closed when the test ends.
func newKafka(t testing.TB, brokers []string, opts ...func(*bus.KafkaConfig)) *bus.Kafka {
	t.Helper()
	cfg := bus.KafkaConfig{
		Brokers: brokers,
		Log:     slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	for _, o := range opts {
		o(&cfg)
	}
	k, err := bus.NewKafka(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := k.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return k
}

func TestNewKafkaRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name    string
		brokers []string
	}{
		{name: "no brokers", brokers: nil},
		{name: "empty broker", brokers: []string{"127.0.0.1:9092", ""}},
		{name: "no port", brokers: []string{"kafka"}},
		{name: "port not a number", brokers: []string{"kafka:http"}},
		{name: "port zero", brokers: []string{"kafka:0"}},
		{name: "empty port", brokers: []string{"kafka:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := bus.NewKafka(bus.KafkaConfig{Brokers: tt.brokers})
			if !errors.Is(err, problem.ErrInvalid) {
				t.Fatalf("NewKafka(%q) error = %v, want ErrInvalid", tt.brokers, err)
			}
		})
	}
}

func TestKafkaNeedsTopicAndGroup(t *testing.T) {
	k := newKafka(t, []string{"127.0.0.1:9"}) // never contacted
	for _, tg := range [][2]string{{"", "g"}, {"t", ""}} {
		if err := k.Consume(t.Context(), tg[0], tg[1], bustest.NewRecorder(1).Handle); !errors.Is(err, problem.ErrInvalid) {
			t.Errorf("Consume(topic %q, group %q) = %v, want ErrInvalid", tg[0], tg[1], err)
		}
	}
	if err := k.Publish(t.Context(), "", bustest.Messages(1, 1)...); !errors.Is(err, problem.ErrInvalid) {
		t.Errorf("Publish to topic \"\" = %v, want ErrInvalid", err)
	}
}

func TestKafkaPublishToUnreachableClusterIsUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connections are refused
	k := newKafka(t, []string{addr}, func(c *bus.KafkaConfig) { c.WriteTimeout = 2 * time.Second })
	ctx, cancel := context.WithTimeout(t.Context(), bustest.Wait)
	defer cancel()
	err = k.Publish(ctx, "t", bus.Message{Key: []byte("k"), Value: []byte("v")})
	if !errors.Is(err, problem.ErrUnavailable) {
		t.Fatalf("Publish to a dead broker: %v, want ErrUnavailable", err)
	}
}

func TestKafkaTopicPartitions(t *testing.T) {
	tests := []struct {
		name   string
		seed   []kfake.Opt // auto-creation is off on these brokers
		config int
		want   int
	}{
		{name: "created with the configured count", config: 3, want: 3},
		{name: "created with the default count", want: 6},
		{name: "existing topic used as it is", seed: []kfake.Opt{kfake.SeedTopics(2, "topic")}, config: 3, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			brokers := bustest.Kafka(t, tt.seed...)
			k := newKafka(t, brokers, func(c *bus.KafkaConfig) { c.Partitions = tt.config })
			bustest.Publish(t, k, "topic", bustest.Messages(10, 10), 10)
			md, err := (&kafka.Client{Addr: kafka.TCP(brokers...)}).Metadata(t.Context(), &kafka.MetadataRequest{Topics: []string{"topic"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(md.Topics) != 1 || md.Topics[0].Error != nil || len(md.Topics[0].Partitions) != tt.want {
				t.Fatalf("topic metadata = %+v, want %d partitions", md.Topics, tt.want)
			}
		})
	}
}

func TestKafkaCloseStopsConsumeAndPublish(t *testing.T) {
	k := newKafka(t, bustest.Kafka(t))
	r := bustest.NewRecorder(1)
	done := make(chan error, 1)
	go func() { done <- k.Consume(t.Context(), "closing", "g", r.Handle) }()
	bustest.Publish(t, k, "closing", bustest.Messages(1, 1), 1)
	r.Wait(t) // the consumer is running
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, bus.ErrClosed) {
			t.Errorf("Consume after Close = %v, want ErrClosed", err)
		}
	case <-time.After(bustest.Wait):
		t.Fatal("Consume still running after Close")
	}
	if err := k.Publish(t.Context(), "closing", bustest.Messages(1, 1)...); !errors.Is(err, bus.ErrClosed) {
		t.Errorf("Publish after Close = %v, want ErrClosed", err)
	}
	if err := k.Consume(t.Context(), "closing", "g", r.Handle); !errors.Is(err, bus.ErrClosed) {
		t.Errorf("Consume after Close = %v, want ErrClosed", err)
	}
}

// TestKafkaRebalanceKeepsKeysTogether runs two members that both own
// partitions, stops one mid-stream, and checks that every message arrived, that
// a key always came from one partition, and that per key the first arrivals
// are in publish order (the leaver's handled batches were committed, so the
// new owner only repeats what was not).
func TestKafkaRebalanceKeepsKeysTogether(t *testing.T) {
	const topic = "rebalance"
	c := bustest.KafkaCluster(t)
	k := newKafka(t, c.ListenAddrs())
	all := bustest.NewRecorder(3000)
	worked := []*bustest.Recorder{bustest.NewRecorder(1), bustest.NewRecorder(1)}
	member := func(i int) bus.Handler {
		return func(ctx context.Context, msgs []bus.Message) error {
			worked[i].Add(msgs)
			return all.Handle(ctx, msgs)
		}
	}
	m0 := bustest.StartMember(t, k, topic, "g", member(0))
	bustest.StartMember(t, k, topic, "g", member(1))
	ctx, cancel := context.WithTimeout(t.Context(), bustest.Wait)
	defer cancel()
	if _, err := c.WaitGroupStable(ctx, "g", 2); err != nil {
		t.Fatalf("group g did not settle with two members: %v", err)
	}
	want := bustest.Messages(60, 3000)
	bustest.Publish(t, k, topic, want[:600], 100)
	worked[0].Wait(t) // both members own partitions and are working
	worked[1].Wait(t)
	m0.Stop(t)
	bustest.Publish(t, k, topic, want[600:], 100)
	all.Wait(t)

	partition := map[string]int{}
	firsts := map[string][]string{}
	seen := map[string]bool{}
	for _, m := range all.Messages() {
		key := string(m.Key)
		if p, ok := partition[key]; ok && p != m.Partition {
			t.Errorf("key %s arrived from partitions %d and %d", key, p, m.Partition)
		}
		partition[key] = m.Partition
		if !seen[string(m.Value)] {
			seen[string(m.Value)] = true
			firsts[key] = append(firsts[key], string(m.Value))
		}
	}
	wantByKey := map[string][]string{}
	for _, m := range want {
		wantByKey[string(m.Key)] = append(wantByKey[string(m.Key)], string(m.Value))
	}
	if diff := cmp.Diff(wantByKey, firsts); diff != "" {
		t.Errorf("first arrivals per key (-published +delivered):\n%s", diff)
	}
	if ps := distinct(partition); len(ps) < 2 {
		t.Errorf("keys used partitions %v, want them spread", ps)
	}
}

func distinct(m map[string]int) []int {
	var out []int
	for _, p := range m {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// scnValue is the size of a typical SCN on the bus (one component, state and
// flag, timestamp and sequence): about 250 bytes.
func scnValue(i int) []byte {
	return fmt.Appendf(nil, `{"Components":["x3000c0s%02db0n%d"],"Enabled":true,"Flag":"OK","Role":"Compute","SubRole":"Worker","SoftwareStatus":"AdminStatus","State":"Ready","Timestamp":"2026-11-21T17:00:00.123456789Z","Seq":%012d,"ExtendedInfo":{"Id":"x3000c0s%02db0n%d","Message":"bulk state update"}}`,
		i%64, i%4, i, i%64, i%4)
}

// BenchmarkKafkaPublish measures Publish of batches of 1,000 SCN-sized
// messages (distinct xname keys) to an in-process kfake broker.
func BenchmarkKafkaPublish(b *testing.B) {
	k := newKafka(b, bustest.Kafka(b))
	const batch = 1000
	msgs := make([]bus.Message, batch)
	for i := range msgs {
		msgs[i] = bus.Message{Key: fmt.Appendf(nil, "x3000c0s%db0n%d", i/4, i%4), Value: scnValue(i)}
	}
	if err := k.Publish(b.Context(), bus.TopicSCN, msgs...); err != nil { // creates the topic
		b.Fatal(err)
	}
	b.SetBytes(int64(batch * len(msgs[0].Value)))
	n := 0
	for b.Loop() {
		if err := k.Publish(b.Context(), bus.TopicSCN, msgs...); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n*batch)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkKafkaPublishConsume measures the pipeline hmnfd sits on: batches of
// 1,000 SCN-sized messages published and handled by one group member, each
// batch waited for before the next is sent.
func BenchmarkKafkaPublishConsume(b *testing.B) {
	k := newKafka(b, bustest.Kafka(b))
	const batch = 1000
	msgs := make([]bus.Message, batch)
	for i := range msgs {
		msgs[i] = bus.Message{Key: fmt.Appendf(nil, "x3000c0s%db0n%d", i/4, i%4), Value: scnValue(i)}
	}
	handled := make(chan int, 1024)
	bustest.StartMember(b, k, bus.TopicSCN, "bench", func(_ context.Context, got []bus.Message) error {
		handled <- len(got)
		return nil
	})
	roundTrip := func() {
		if err := k.Publish(b.Context(), bus.TopicSCN, msgs...); err != nil {
			b.Fatal(err)
		}
		for left := batch; left > 0; {
			select {
			case c := <-handled:
				left -= c
			case <-time.After(bustest.Wait):
				b.Fatalf("batch not consumed within %v", bustest.Wait)
			}
		}
	}
	roundTrip() // the member has joined its group
	n := 0
	for b.Loop() {
		roundTrip()
		n++
	}
	b.ReportMetric(float64(n*batch)/b.Elapsed().Seconds(), "msgs/s")
}
