package bus

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hmsuite/hms/internal/pause"
)

// DefaultMemoryRetention is how many messages a Memory topic keeps beyond what
// every known group has consumed.
const DefaultMemoryRetention = 1 << 20

// UnreadRetention is the Retention for a Memory bus a daemon publishes to
// with no in-process consumer (a standalone hsm or hbtd, hms up): it keeps
// only the newest messages, for a consumer that may still join.
const UnreadRetention = 10_000

// NewUnread returns a Memory bus with UnreadRetention.
func NewUnread() *Memory {
	m := NewMemory()
	m.Retention = UnreadRetention
	return m
}

// Memory is an in-process bus: each topic is an append-only log with one
// committed offset per consumer group. Messages every group has committed are
// trimmed, and at most Retention unconsumed messages are kept (the oldest are
// dropped first and counted in Dropped). It is safe for concurrent use.
//
// Members of one group take successive batches, so order per key holds only
// with one member per group (as inside hms up); Kafka keeps it across members
// through partition ownership.
type Memory struct {
	mu        sync.Mutex
	topics    map[string]*memTopic
	Retention int
	closed    bool
	done      chan struct{} // closed by Close
}

type memTopic struct {
	base   int64 // offset of msgs[0]
	msgs   []Message
	groups map[string]int64 // next offset to deliver per group
	// claimed are the first offsets of the batches handed out and not yet
	// handled, per group: compaction keeps them, so a batch that fails can
	// be delivered again even after other batches or groups went on.
	claimed map[string]map[int64]bool
	wake    chan struct{} // closed and replaced on every append
	dropped int64
}

// NewMemory returns an empty in-process bus.
func NewMemory() *Memory {
	return &Memory{topics: map[string]*memTopic{}, Retention: DefaultMemoryRetention, done: make(chan struct{})}
}

func (m *Memory) topic(name string) *memTopic {
	t := m.topics[name]
	if t == nil {
		t = &memTopic{groups: map[string]int64{}, claimed: map[string]map[int64]bool{}, wake: make(chan struct{})}
		m.topics[name] = t
	}
	return t
}

// Publish appends msgs to topic.
func (m *Memory) Publish(ctx context.Context, topic string, msgs ...Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return fmt.Errorf("publish %s: %w", topic, ErrClosed)
	}
	t := m.topic(topic)
	now := time.Now()
	for _, msg := range msgs {
		msg.Topic = topic
		msg.Offset = t.base + int64(len(t.msgs))
		if msg.Time.IsZero() {
			msg.Time = now
		}
		t.msgs = append(t.msgs, msg)
	}
	if over := len(t.msgs) - m.Retention; over > 0 {
		t.dropped += int64(over)
		t.trim(t.base + int64(over))
	}
	close(t.wake)
	t.wake = make(chan struct{})
	return nil
}

// Dropped reports how many messages of topic were discarded by the retention limit.
func (m *Memory) Dropped(topic string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.topic(topic).dropped
}

// trim drops messages before offset upTo.
func (t *memTopic) trim(upTo int64) {
	n := int(upTo - t.base)
	if n <= 0 {
		return
	}
	n = min(n, len(t.msgs))
	clear(t.msgs[:n])
	t.msgs = t.msgs[n:]
	t.base += int64(n)
	for g, off := range t.groups {
		if off < t.base {
			t.groups[g] = t.base
		}
	}
}

const memBatch = 1000

// Consume delivers batches of topic to h as member of group. Members of one
// group share the log: each batch goes to one member. A new group starts at the
// oldest retained message. It returns nil when ctx is cancelled and ErrClosed
// once the bus is closed; no batch is handed out after either.
func (m *Memory) Consume(ctx context.Context, topic, group string, h Handler) error {
	backoff := 10 * time.Millisecond
	for {
		if ctx.Err() != nil {
			return nil
		}
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return fmt.Errorf("consume %s: %w", topic, ErrClosed)
		}
		t := m.topic(topic)
		off, ok := t.groups[group]
		if !ok || off < t.base {
			off = t.base
		}
		start := int(off - t.base)
		end := min(len(t.msgs), start+memBatch)
		wake := t.wake
		var batch []Message
		if start < end {
			batch = append(batch, t.msgs[start:end]...)
			// Claim the batch so another member of the group does not take it too.
			t.groups[group] = off + int64(len(batch))
			if t.claimed[group] == nil {
				t.claimed[group] = map[int64]bool{}
			}
			t.claimed[group][off] = true
		} else {
			t.groups[group] = off
		}
		m.mu.Unlock()
		if len(batch) == 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-m.done:
				continue // the loop top reports ErrClosed
			case <-wake:
				continue
			}
		}
		err := h(ctx, batch)
		m.release(topic, group, off)
		if err != nil {
			m.rewind(topic, group, off)
			if !pause.For(ctx, backoff) {
				return nil
			}
			backoff = min(backoff*2, 5*time.Second)
			continue
		}
		backoff = 10 * time.Millisecond
		m.compact(topic)
	}
}

// rewind puts the group's offset back so a failed batch is delivered again.
func (m *Memory) rewind(topic, group string, off int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.topic(topic)
	if cur := t.groups[group]; off < cur {
		t.groups[group] = off
	}
}

// release forgets the claim of the batch starting at off, handled or failed.
func (m *Memory) release(topic, group string, off int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.topic(topic).claimed[group], off)
}

// compact trims what every group has consumed, keeping the batches still
// being handled.
func (m *Memory) compact(topic string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.topic(topic)
	low := t.base + int64(len(t.msgs))
	for g, off := range t.groups {
		low = min(low, off)
		for start := range t.claimed[g] {
			low = min(low, start)
		}
	}
	t.trim(low)
}

// Close stops every running Consume (they return ErrClosed) and makes later
// Publish calls fail with ErrClosed. Closing twice is harmless.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.closed {
		m.closed = true
		close(m.done)
	}
	return nil
}
