// Package bustest helps tests use the message bus: Kafka starts an in-process
// Kafka-protocol broker (franz-go's kfake) on loopback, and Conformance runs the
// behaviour every bus.Bus implementation must share.
package bustest

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Kafka starts a one-broker kfake cluster on a free loopback port and returns
// its bootstrap addresses; the cluster is closed when the test ends. The
// broker does not auto-create topics (bus.Kafka creates its own, as it must on
// clusters with auto-creation off); pass kfake.AllowAutoTopicCreation(),
// kfake.SeedTopics(...) or other options in opts to change that.
func Kafka(t testing.TB, opts ...kfake.Opt) []string {
	t.Helper()
	return KafkaCluster(t, opts...).ListenAddrs()
}

// KafkaCluster is Kafka returning the cluster itself, for tests that inject
// faults (ControlKey) or wait for a group to settle (WaitGroupStable).
func KafkaCluster(t testing.TB, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.Ports(0)}, opts...)...)
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}
