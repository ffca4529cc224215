package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/hmsuite/hms/internal/problem"
)

// ErrClosed is returned by Publish and Consume once the bus has been closed.
var ErrClosed = errors.New("bus closed")

// KafkaConfig configures NewKafka. Only Brokers is required; every zero field
// takes the default named in its comment.
type KafkaConfig struct {
	// Brokers are the bootstrap addresses, host:port.
	Brokers []string
	// ClientID names this client to the brokers (default "hms").
	ClientID string
	// Log receives client diagnostics (default: discarded).
	Log *slog.Logger

	// Partitions is the partition count of topics the bus creates (default 6).
	// The bus creates a topic it publishes to or consumes from when the topic
	// does not exist yet, so it does not depend on broker auto-creation; an
	// existing topic is used as it is.
	Partitions int
	// ReplicationFactor of topics the bus creates (default -1: the broker's
	// default.replication.factor).
	ReplicationFactor int

	// BatchSize is the most messages sent in one produce request per partition
	// (default 1000).
	BatchSize int
	// BatchBytes is the most bytes sent in one produce request per partition
	// (default 1 MiB; keep it under the broker's message.max.bytes).
	BatchBytes int64
	// WriteTimeout bounds one produce request (default 10s).
	WriteTimeout time.Duration
	// MaxAttempts is how often a produce request is tried when the broker or
	// connection fails in a way that may clear up (default 5).
	MaxAttempts int

	// ConsumeBatch is the most messages handed to one Handler call (default 500).
	ConsumeBatch int
	// ConsumeWait is how long Consume keeps gathering a batch after its first
	// message arrived (default 5ms).
	ConsumeWait time.Duration
	// SessionTimeout, HeartbeatInterval and RebalanceTimeout tune group
	// membership (defaults 10s, 1s, 10s). A member that stops without leaving is
	// replaced after SessionTimeout; members notice a rebalance within one
	// HeartbeatInterval.
	SessionTimeout    time.Duration
	HeartbeatInterval time.Duration
	RebalanceTimeout  time.Duration
	// MaxBackoff caps the wait before a failed batch is handed over again
	// (default 5s; the first retry waits 10ms and each later one doubles).
	MaxBackoff time.Duration
}

func (c *KafkaConfig) setDefaults() {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if c.ClientID == "" {
		c.ClientID = "hms"
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Partitions <= 0 {
		c.Partitions = 6
	}
	if c.ReplicationFactor == 0 {
		c.ReplicationFactor = -1
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 1000
	}
	if c.BatchBytes <= 0 {
		c.BatchBytes = 1 << 20
	}
	if c.ConsumeBatch <= 0 {
		c.ConsumeBatch = 500
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 5
	}
	def(&c.WriteTimeout, 10*time.Second)
	def(&c.ConsumeWait, 5*time.Millisecond)
	def(&c.SessionTimeout, 10*time.Second)
	def(&c.HeartbeatInterval, time.Second)
	def(&c.RebalanceTimeout, 10*time.Second)
	def(&c.MaxBackoff, 5*time.Second)
}

// Kafka is the Bus on a Kafka cluster, through segmentio/kafka-go. Publish
// sends every message with acks from all in-sync replicas and places it on a
// partition by a hash of its key, so messages with one key (an xname) stay in
// order. Consume joins a consumer group, starts a new group at the oldest
// retained offset (as Memory does), and commits a batch only after its Handler
// returned nil.
type Kafka struct {
	cfg       KafkaConfig
	log       *slog.Logger
	transport *kafka.Transport
	client    *kafka.Client
	balancer  *kafka.Hash

	mu      sync.Mutex
	topics  map[string]bool                      // topics known to exist
	stops   map[*kafka.Reader]context.CancelFunc // running Consume calls
	running sync.WaitGroup
	closed  bool
}

// NewKafka returns a Kafka bus. It does not contact the brokers: the first
// Publish or Consume does, and reports an unreachable cluster then.
func NewKafka(cfg KafkaConfig) (*Kafka, error) {
	if len(cfg.Brokers) == 0 {
		return nil, problem.Invalidf("kafka brokers: at least one host:port is required")
	}
	for _, b := range cfg.Brokers {
		_, port, err := net.SplitHostPort(b)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 1 || n > 65535 {
			return nil, problem.Invalidf("kafka brokers: %q is not host:port", b)
		}
	}
	cfg.setDefaults()
	log := cfg.Log.With("component", "bus_kafka")
	tr := &kafka.Transport{ClientID: cfg.ClientID, DialTimeout: 5 * time.Second}
	k := &Kafka{
		cfg:       cfg,
		log:       log,
		transport: tr,
		client:    &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Transport: tr, Timeout: cfg.WriteTimeout},
		balancer:  &kafka.Hash{},
		topics:    map[string]bool{},
		stops:     map[*kafka.Reader]context.CancelFunc{},
	}
	return k, nil
}

// kafkaLogger adapts kafka-go's Printf logging to slog with a constant message.
type kafkaLogger struct {
	log   *slog.Logger
	level slog.Level
}

func (l kafkaLogger) Printf(format string, args ...any) {
	if l.log.Enabled(context.Background(), l.level) {
		l.log.Log(context.Background(), l.level, "kafka_client", "detail", fmt.Sprintf(format, args...))
	}
}

// ensureTopic creates topic with the configured partition count unless it
// exists. Creating it here, rather than relying on broker auto-creation, gives
// the partition count we want and works on clusters with auto-creation off.
func (k *Kafka) ensureTopic(ctx context.Context, topic string) error {
	k.mu.Lock()
	known := k.topics[topic]
	k.mu.Unlock()
	if known {
		return nil
	}
	// Look first, so a client that may not create topics can use existing ones.
	_, err := k.partitions(ctx, topic)
	if err == nil {
		k.markTopic(topic)
		return nil
	}
	if !errors.Is(err, kafka.UnknownTopicOrPartition) {
		if ctx.Err() != nil {
			return fmt.Errorf("look up topic %s: %w", topic, ctx.Err())
		}
		return fmt.Errorf("look up topic %s: %w: %w", topic, problem.ErrUnavailable, err)
	}
	res, err := k.client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic:             topic,
		NumPartitions:     k.cfg.Partitions,
		ReplicationFactor: k.cfg.ReplicationFactor,
	}}})
	if err == nil {
		err = res.Errors[topic]
	}
	switch {
	case err == nil:
		k.log.Info("kafka_topic_created", "topic", topic, "partitions", k.cfg.Partitions)
	case errors.Is(err, kafka.TopicAlreadyExists):
	case ctx.Err() != nil:
		return fmt.Errorf("create topic %s: %w", topic, ctx.Err())
	default:
		return fmt.Errorf("create topic %s: %w: %w", topic, problem.ErrUnavailable, err)
	}
	k.markTopic(topic)
	return nil
}

func (k *Kafka) markTopic(topic string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.topics[topic] = true
}

// enter registers a Publish or Consume call that Close must wait for; false
// means the bus is closed.
func (k *Kafka) enter() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return false
	}
	k.running.Add(1)
	return true
}

func (k *Kafka) isClosed() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.closed
}

// Close stops every running Consume (they return ErrClosed after leaving their
// group), waits for running Publish calls and releases connections.
func (k *Kafka) Close() error {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil
	}
	k.closed = true
	for _, stop := range k.stops {
		stop()
	}
	k.mu.Unlock()
	k.running.Wait()
	k.transport.CloseIdleConnections()
	return nil
}
