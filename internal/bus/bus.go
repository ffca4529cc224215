// Package bus is the message bus the daemons publish state-change and heartbeat
// notifications on. Two implementations satisfy the same interfaces: Memory, an
// in-process log used when the suite runs embedded (hms up, tests), and Kafka
// (see kafka.go) for replicated deployments.
//
// Delivery is at least once: a consumer's Handler gets batches in order per key,
// and a batch's offsets are committed only after the Handler returns nil, so a
// consumer that crashes or fails sees the batch again. Consumers dedupe with the
// sequence numbers producers put in the payload.
package bus

import (
	"context"
	"time"
)

// Well-known topics, named as the HMS services name them.
const (
	TopicSCN       = "cray-hmsstatechange-notifications"
	TopicHeartbeat = "cray-hmsheartbeat-notifications"
)

// Message is one record on a topic.
type Message struct {
	Topic     string
	Key       []byte
	Value     []byte
	Partition int
	Offset    int64
	Time      time.Time
}

// Publisher appends messages to a topic.
type Publisher interface {
	// Publish returns once the bus has accepted every message; messages with the
	// same key keep their order.
	Publish(ctx context.Context, topic string, msgs ...Message) error
}

// Handler processes a batch of messages. Returning nil commits the batch;
// returning an error makes the consumer deliver the same batch again after a
// backoff, so handlers must be idempotent.
type Handler func(ctx context.Context, msgs []Message) error

// Consumer reads a topic as a member of a consumer group.
type Consumer interface {
	// Consume delivers the topic's messages to h until ctx is cancelled, sharing
	// the topic with other members of group. It returns nil on cancellation.
	Consume(ctx context.Context, topic, group string, h Handler) error
}

// Bus is both ends plus Close.
type Bus interface {
	Publisher
	Consumer
	Close() error
}
