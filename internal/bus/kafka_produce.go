package bus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/hmsuite/hms/internal/pause"
	"github.com/hmsuite/hms/internal/problem"
)

// Publish sends msgs to topic and returns once every message is acknowledged
// by all in-sync replicas. Each message's Key, Value and Time are sent
// (Partition and Offset are ignored); the partition is a hash of the key, so
// messages with one key keep their order. A failure is an ErrUnavailable
// error; some messages may have been written anyway, so callers retry the whole
// call and consumers dedupe.
//
// Publish is synchronous and does not linger: it splits msgs by partition and
// sends each partition's share at once, in order, in produce requests of at
// most BatchSize messages or BatchBytes, all partitions concurrently. Callers
// get throughput by publishing many messages per call.
func (k *Kafka) Publish(ctx context.Context, topic string, msgs ...Message) error {
	if topic == "" {
		return problem.Invalidf("publish: topic must be named")
	}
	if len(msgs) == 0 {
		return nil
	}
	if !k.enter() {
		return fmt.Errorf("publish to %s: %w", topic, ErrClosed)
	}
	defer k.running.Done()
	err := k.publish(ctx, topic, msgs)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("publish to %s: %w", topic, ctx.Err())
	case errors.Is(err, problem.ErrUnavailable):
		return fmt.Errorf("publish %d messages to %s: %w", len(msgs), topic, err)
	default:
		return fmt.Errorf("publish %d messages to %s: %w: %w", len(msgs), topic, problem.ErrUnavailable, err)
	}
}

func (k *Kafka) publish(ctx context.Context, topic string, msgs []Message) error {
	if err := k.ensureTopic(ctx, topic); err != nil {
		return err
	}
	partitions, err := k.partitions(ctx, topic)
	if err != nil {
		return err
	}
	shares := make([][]Message, len(partitions))
	now := time.Now()
	for _, m := range msgs {
		p := k.balancer.Balance(kafka.Message{Key: m.Key}, partitions...)
		if m.Time.IsZero() {
			m.Time = now
		}
		shares[p] = append(shares[p], m)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(shares))
	for p, recs := range shares {
		if len(recs) > 0 {
			wg.Go(func() { errs[p] = k.producePartition(ctx, topic, p, recs) })
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// partitions lists topic's partition IDs. The transport caches metadata, so
// this rarely leaves the process.
func (k *Kafka) partitions(ctx context.Context, topic string) ([]int, error) {
	md, err := k.client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, fmt.Errorf("metadata of %s: %w", topic, err)
	}
	for _, t := range md.Topics {
		if t.Name != topic {
			continue
		}
		if t.Error != nil {
			return nil, fmt.Errorf("metadata of %s: %w", topic, t.Error)
		}
		ids := make([]int, len(t.Partitions))
		for i := range ids {
			ids[i] = i
		}
		if len(ids) == 0 {
			break
		}
		return ids, nil
	}
	return nil, fmt.Errorf("metadata of %s: %w", topic, kafka.UnknownTopicOrPartition)
}

// producePartition sends recs to one partition in order, chunk by chunk; a
// chunk is retried until it is acknowledged or attempts run out, and later
// chunks wait for it, so the partition's order holds.
func (k *Kafka) producePartition(ctx context.Context, topic string, p int, msgs []Message) error {
	for len(msgs) > 0 {
		n, size := 0, int64(0)
		for n < len(msgs) && n < k.cfg.BatchSize {
			s := int64(len(msgs[n].Key) + len(msgs[n].Value) + 32) // + varints, attributes, deltas
			if n > 0 && size+s > k.cfg.BatchBytes {
				break
			}
			size += s
			n++
		}
		if err := k.produceChunk(ctx, topic, p, msgs[:n]); err != nil {
			return fmt.Errorf("partition %d: %w", p, err)
		}
		msgs = msgs[n:]
	}
	return nil
}

func (k *Kafka) produceChunk(ctx context.Context, topic string, p int, msgs []Message) error {
	backoff := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := k.produceOnce(ctx, topic, p, msgs)
		if err == nil || ctx.Err() != nil || attempt >= k.cfg.MaxAttempts || !retriable(err) {
			return err
		}
		k.log.Debug("kafka_produce_retry", "topic", topic, "partition", p, "attempt", attempt, "err", err)
		if !pause.For(ctx, backoff) {
			return ctx.Err()
		}
		backoff = min(2*backoff, time.Second)
	}
}

func (k *Kafka) produceOnce(ctx context.Context, topic string, p int, msgs []Message) error {
	ctx, cancel := context.WithTimeout(ctx, k.cfg.WriteTimeout)
	defer cancel()
	recs := make([]kafka.Record, len(msgs)) // readers: built afresh for each attempt
	for i, m := range msgs {
		recs[i] = kafka.Record{Time: m.Time, Key: kafka.NewBytes(m.Key), Value: kafka.NewBytes(m.Value)}
	}
	res, err := k.client.Produce(ctx, &kafka.ProduceRequest{
		Topic:        topic,
		Partition:    p,
		RequiredAcks: kafka.RequireAll,
		Records:      kafka.NewRecordReader(recs...),
	})
	if err != nil {
		return err
	}
	if res.Error != nil {
		return res.Error
	}
	for _, rerr := range res.RecordErrors {
		return rerr
	}
	return nil
}

// retriable reports whether a produce error may clear up on its own: broker
// errors Kafka marks retriable (leader moves, timeouts) and dropped connections.
func retriable(err error) bool {
	var kerr kafka.Error
	if errors.As(err, &kerr) {
		return kerr.Temporary()
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, context.DeadlineExceeded)
}
