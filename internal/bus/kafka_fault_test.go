package bus_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hmsuite/hms/internal/bus/bustest"
	"github.com/hmsuite/hms/internal/problem"
)

// failProduce makes the broker answer produce requests with code, for the next
// request only or, when always, for every one; it counts produce requests.
func failProduce(c *kfake.Cluster, code int16, always bool) *atomic.Int32 {
	var n atomic.Int32
	c.ControlKey(int16(kmsg.Produce), func(r kmsg.Request) (kmsg.Response, error, bool) {
		n.Add(1)
		if always {
			c.KeepControl()
		}
		req := r.(*kmsg.ProduceRequest)
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	return &n
}

func TestKafkaPublishRetriesTransientBrokerError(t *testing.T) {
	const topic = "retry"
	c := bustest.KafkaCluster(t, kfake.SeedTopics(1, topic))
	k := newKafka(t, c.ListenAddrs())
	fails := failProduce(c, kerr.NotLeaderForPartition.Code, false)
	want := bustest.Messages(3, 30)
	bustest.Publish(t, k, topic, want, 30)
	if n := fails.Load(); n != 1 {
		t.Fatalf("fault saw %d produce requests, want 1", n)
	}
	r := bustest.NewRecorder(len(want))
	bustest.StartMember(t, k, topic, "g", r.Handle)
	r.Wait(t)
	if diff := cmp.Diff(bustest.ByKey(want), bustest.ByKey(r.Messages())); diff != "" {
		t.Errorf("after one rejected attempt (-published +stored):\n%s", diff)
	}
}

func TestKafkaPublishFailsOnPermanentBrokerError(t *testing.T) {
	const topic = "too-large"
	c := bustest.KafkaCluster(t, kfake.SeedTopics(1, topic))
	k := newKafka(t, c.ListenAddrs())
	fails := failProduce(c, kerr.MessageTooLarge.Code, true)
	err := k.Publish(t.Context(), topic, bustest.Messages(1, 5)...)
	if !errors.Is(err, problem.ErrUnavailable) {
		t.Fatalf("Publish = %v, want ErrUnavailable", err)
	}
	if n := fails.Load(); n != 1 {
		t.Errorf("broker saw %d produce requests, want 1 (a permanent error is not retried)", n)
	}
}
