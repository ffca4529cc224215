package bus_test

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/bus/bustest"
	"github.com/hmsuite/hms/internal/testpeer"
)

// kcat runs the kcat binary against the first broker and returns its stdout.
func kcat(t *testing.T, stdin []byte, broker string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), bustest.Wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, testpeer.Require(t, "kcat"), append([]string{"-b", broker, "-q"}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kcat %q: %v\n%s", args, err, stderr.String())
	}
	return out
}

// TestKcatReadsWhatKafkaPublishes checks our wire output with librdkafka:
// every message arrives with its key, per key in order and from one partition.
func TestKcatReadsWhatKafkaPublishes(t *testing.T) {
	testpeer.Require(t, "kcat")
	const topic = "kcat-read"
	brokers := bustest.Kafka(t)
	k := newKafka(t, brokers)
	want := bustest.Messages(12, 600)
	bustest.Publish(t, k, topic, want, 250)

	out := kcat(t, nil, brokers[0], "-C", "-t", topic, "-o", "beginning", "-e", "-f", "%k %p %s\n")
	var got []bus.Message
	partition := map[string]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("kcat line %q: want key, partition, value", line)
		}
		if p, ok := partition[f[0]]; ok && p != f[1] {
			t.Errorf("key %s read from partitions %s and %s", f[0], p, f[1])
		}
		partition[f[0]] = f[1]
		got = append(got, bus.Message{Key: []byte(f[0]), Value: []byte(f[2])})
	}
	if diff := cmp.Diff(bustest.ByKey(want), bustest.ByKey(got)); diff != "" {
		t.Errorf("kcat read (-published +read):\n%s", diff)
	}
}

// TestKafkaConsumesWhatKcatProduces checks our consumer against librdkafka's
// producer (its own partitioner and record batches).
func TestKafkaConsumesWhatKcatProduces(t *testing.T) {
	testpeer.Require(t, "kcat")
	const topic = "kcat-write"
	brokers := bustest.Kafka(t, kfake.SeedTopics(6, topic))
	k := newKafka(t, brokers)
	want := bustest.Messages(9, 450)
	var in bytes.Buffer
	for _, m := range want {
		in.WriteString(string(m.Key) + "|" + string(m.Value) + "\n")
	}
	kcat(t, in.Bytes(), brokers[0], "-P", "-t", topic, "-K", "|")

	r := bustest.NewRecorder(len(want))
	bustest.StartMember(t, k, topic, "from-kcat", r.Handle)
	r.Wait(t)
	got := r.Messages()
	if diff := cmp.Diff(bustest.ByKey(want), bustest.ByKey(got)); diff != "" {
		t.Errorf("consumed (-produced by kcat +consumed):\n%s", diff)
	}
	for _, m := range got {
		if m.Topic != topic || m.Offset < 0 || m.Time.IsZero() || m.Partition < 0 || m.Partition > 5 {
			t.Fatalf("message %q: Topic %q Partition %d Offset %d Time %v, want the record's coordinates",
				m.Value, m.Topic, m.Partition, m.Offset, m.Time)
		}
	}
}
