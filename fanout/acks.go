package fanout

import (
	"context"
	"sync"
	"time"
)

// acker gathers the senders' acknowledgements for the writer (runAcks).
// Senders append to one buffer under a mutex rather than send on a channel:
// a send woke the waiting writer once per delivery, a goroutine switch each,
// which on a fan-out of one SCN to 10,000 subscribers was a share of the
// per-delivery CPU worth removing (issue 20). Now the writer is woken once
// per batch.
type acker struct {
	mu   sync.Mutex
	room *sync.Cond // the writer took the buffer
	buf  []qkey
	kick chan struct{} // capacity 1: the buffer is no longer empty
}

// ackMaxBuf is how many unwritten acknowledgements senders may pile up
// before they wait for the writer (the back-pressure the bounded channel
// gave before).
const ackMaxBuf = 64 << 10

// ackLinger is how long the writer waits for more acknowledgements after
// the first one before it commits them in one transaction: one transaction
// per acknowledgement would cap delivery at the disk's commit rate.
const ackLinger = 10 * time.Millisecond

func newAcker() *acker {
	a := &acker{kick: make(chan struct{}, 1)}
	a.room = sync.NewCond(&a.mu)
	return a
}

// add records that target has the SCNs of batch.
func (a *acker) add(target int64, batch []pending) {
	a.mu.Lock()
	for len(a.buf) >= ackMaxBuf {
		a.room.Wait()
	}
	if len(a.buf) == 0 {
		select {
		case a.kick <- struct{}{}:
		default:
		}
	}
	for _, p := range batch {
		a.buf = append(a.buf, qkey{target: target, scn: p.id})
	}
	a.mu.Unlock()
}

// take returns what was added since the last take; spare is a buffer the
// caller is done with.
func (a *acker) take(spare []qkey) []qkey {
	a.mu.Lock()
	b := a.buf
	a.buf = spare[:0]
	a.mu.Unlock()
	a.room.Broadcast()
	return b
}

// runAcks writes acknowledgements in batches until ctx is cancelled (after
// every sender has stopped), then writes what is left.
func (s *Service) runAcks(ctx context.Context) {
	var spare []qkey
	for {
		select {
		case <-s.acks.kick:
			linger := time.NewTimer(ackLinger)
			select {
			case <-linger.C:
			case <-ctx.Done():
			}
			linger.Stop()
		case <-ctx.Done():
		}
		buf := s.acks.take(spare)
		s.writeAcks(ctx, buf)
		spare = buf
		if ctx.Err() != nil {
			return
		}
	}
}

// writeAcks records keys in the store. It is never cut short by shutdown:
// a lost acknowledgement means a duplicate delivery.
func (s *Service) writeAcks(ctx context.Context, keys []qkey) {
	if len(keys) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.store.ack(ctx, keys); err != nil {
		// The SCNs are delivered again after a restart: at least once.
		s.log.Error("ack_write_failed", "count", len(keys), "err", err)
	}
}
