package bus_test

import (
	"log/slog"
	"os"
	"testing"

	"github.com/hmsuite/hms/internal/bus"
)

// newKafka returns a Kafka bus on brokers that logs warnings to stderr and is
// closed when the test ends.
func newKafka(t testing.TB, brokers []string) *bus.Kafka {
	t.Helper()
	k, err := bus.NewKafka(bus.KafkaConfig{
		Brokers: brokers,
		Log:     slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
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
