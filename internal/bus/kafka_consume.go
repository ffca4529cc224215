package bus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/hmsuite/hms/internal/pause"
	"github.com/hmsuite/hms/internal/problem"
)

// Consume reads topic as a member of group until ctx is cancelled (then it
// returns nil) or the bus is closed (ErrClosed). A group with no committed
// offsets starts at the oldest retained message.
//
// Batches gather what arrives within ConsumeWait of the first message, up to
// ConsumeBatch messages, and may span partitions; within a partition (so within
// a key) they are in order. A batch is committed after h returns nil. When h
// fails, the same batch is handed to h again after a backoff, until it succeeds
// or ctx ends, and nothing later is fetched meanwhile. When the group rebalances
// mid-batch, the partition's next owner starts at the last committed offset, so
// a message may be handled twice but is never skipped.
func (k *Kafka) Consume(ctx context.Context, topic, group string, h Handler) error {
	if topic == "" || group == "" {
		return problem.Invalidf("consume: topic %q and group %q must both be named", topic, group)
	}
	if !k.waitTopic(ctx, topic) {
		return k.stopReason()
	}
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:           k.cfg.Brokers,
		GroupID:           group,
		Topic:             topic,
		Dialer:            &kafka.Dialer{ClientID: k.cfg.ClientID, Timeout: 5 * time.Second, DualStack: true},
		StartOffset:       kafka.FirstOffset,
		CommitInterval:    0, // synchronous commits: CommitMessages returns once the broker has the offset
		MinBytes:          1,
		MaxBytes:          4 << 20,
		MaxWait:           time.Second, // kafka-go keeps a quarter as RTT margin; shorter waits time out on a loaded host, longer ones slow Close and rebalances
		QueueCapacity:     k.cfg.ConsumeBatch,
		ReadLagInterval:   -1,
		SessionTimeout:    k.cfg.SessionTimeout,
		HeartbeatInterval: k.cfg.HeartbeatInterval,
		RebalanceTimeout:  k.cfg.RebalanceTimeout,
		JoinGroupBackoff:  500 * time.Millisecond,
		ReadBackoffMin:    50 * time.Millisecond,
		ReadBackoffMax:    time.Second,
		Logger:            kafkaLogger{k.log, slog.LevelDebug},
		// kafka-go reports every rebalance and retried fetch as an error; they
		// are routine, and what does not heal surfaces from FetchMessage.
		ErrorLogger: kafkaLogger{k.log, slog.LevelInfo},
	})
	parent := ctx
	ctx, ok := k.track(ctx, r)
	if !ok {
		_ = r.Close()
		return fmt.Errorf("consume %s: %w", topic, ErrClosed)
	}
	defer k.untrack(r)
	log := k.log.With("topic", topic, "group", group)
	for {
		batch, err := k.fetchBatch(ctx, r)
		switch {
		case parent.Err() != nil:
			return nil
		case ctx.Err() != nil || errors.Is(err, io.EOF):
			return fmt.Errorf("consume %s: %w", topic, ErrClosed)
		case err != nil:
			// The reader heals itself (it rejoins the group); wait a little so a
			// persistent failure does not spin.
			log.Warn("kafka_fetch_failed", "err", err)
			if !pause.For(ctx, time.Second) {
				return k.stopReason()
			}
			continue
		}
		if !k.deliver(ctx, log, batch, h) {
			return k.stopReason()
		}
		k.commit(ctx, log, r, batch)
	}
}

// fetchBatch blocks for one message, then gathers more for up to ConsumeWait.
func (k *Kafka) fetchBatch(ctx context.Context, r *kafka.Reader) ([]kafka.Message, error) {
	m, err := r.FetchMessage(ctx)
	if err != nil {
		return nil, err
	}
	batch := []kafka.Message{m}
	wctx, cancel := context.WithTimeout(ctx, k.cfg.ConsumeWait)
	defer cancel()
	for len(batch) < k.cfg.ConsumeBatch {
		// A fetch that times out takes nothing from the reader, so no message
		// is lost between batches.
		m, err := r.FetchMessage(wctx)
		if err != nil {
			break
		}
		batch = append(batch, m)
	}
	return batch, nil
}

// deliver calls h with batch until it returns nil (true) or ctx ends (false).
func (k *Kafka) deliver(ctx context.Context, log *slog.Logger, batch []kafka.Message, h Handler) bool {
	msgs := make([]Message, len(batch))
	for i, m := range batch {
		msgs[i] = Message{Topic: m.Topic, Key: m.Key, Value: m.Value, Partition: m.Partition, Offset: m.Offset, Time: m.Time}
	}
	backoff := 10 * time.Millisecond
	for {
		err := h(ctx, msgs)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		log.Warn("bus_handler_failed", "err", err, "messages", len(msgs), "retry_in", backoff)
		if !pause.For(ctx, backoff) {
			return false
		}
		backoff = min(backoff*2, k.cfg.MaxBackoff)
	}
}

// commit records the batch's offsets. It runs even when ctx was cancelled while
// the handler worked, so a clean stop does not redeliver handled messages. A
// failed commit is only logged: the messages are handled, and whoever owns the
// partition next sees them again, which at-least-once allows.
func (k *Kafka) commit(ctx context.Context, log *slog.Logger, r *kafka.Reader, batch []kafka.Message) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.cfg.RebalanceTimeout)
	defer cancel()
	if err := r.CommitMessages(cctx, batch...); err != nil {
		log.Warn("kafka_commit_failed", "err", err, "messages", len(batch))
	}
}

// waitTopic makes sure topic exists before joining its group, retrying while
// the cluster is unreachable; false means ctx ended or the bus closed.
func (k *Kafka) waitTopic(ctx context.Context, topic string) bool {
	backoff := 100 * time.Millisecond
	for {
		if k.isClosed() {
			return false
		}
		err := k.ensureTopic(ctx, topic)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		k.log.Warn("kafka_topic_unavailable", "topic", topic, "err", err, "retry_in", backoff)
		if !pause.For(ctx, backoff) {
			return false
		}
		backoff = min(backoff*2, k.cfg.MaxBackoff)
	}
}

// stopReason is what Consume returns when it stops before reading: nil on
// cancellation, ErrClosed when the bus was closed.
func (k *Kafka) stopReason() error {
	if k.isClosed() {
		return ErrClosed
	}
	return nil
}

// track registers a running Consume so Close can stop it; the returned
// context ends with ctx or at Close.
func (k *Kafka) track(ctx context.Context, r *kafka.Reader) (context.Context, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return ctx, false
	}
	ctx, stop := context.WithCancel(ctx)
	k.stops[r] = stop
	k.running.Add(1)
	return ctx, true
}

// untrack closes r, which leaves the group so its partitions move at once.
func (k *Kafka) untrack(r *kafka.Reader) {
	if err := r.Close(); err != nil {
		k.log.Warn("kafka_reader_close_failed", "err", err)
	}
	k.mu.Lock()
	k.stops[r]()
	delete(k.stops, r)
	k.mu.Unlock()
	k.running.Done()
}
