package bus_test

import (
	"testing"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/bus/bustest"
)

func TestMemoryConformance(t *testing.T) {
	bustest.Conformance(t, func(t *testing.T) bus.Bus { return bus.NewMemory() })
}

func TestKafkaConformance(t *testing.T) {
	bustest.Conformance(t, func(t *testing.T) bus.Bus { return newKafka(t, bustest.Kafka(t)) })
}
