package dhcp

import (
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/ipxe/lease"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// relayBatch is how many outbox rows (or pending MACs) one round handles.
const relayBatch = 512

// relayRetry is the wait after a failed round (bus or HSM down).
const relayRetry = time.Second

// hsmWriters is how many unknown MACs are written to HSM at once (HSM
// commits concurrent writes together).
const hsmWriters = 16

// relay runs round (the bus's or HSM's) after each commit and, after a
// failed round, every relayRetry. A row leaves the outbox only once the bus
// took it: a bus or HSM outage delays events, it does not lose them. The
// bus and HSM have a loop each: in a boot storm HSM takes thousands of
// unknown MACs, one POST each, and lease events queued behind those writes
// reached discovery tens of seconds late.
func (s *Server) relay(ctx context.Context, wake <-chan struct{}, round func(context.Context) (bool, error)) error {
	retry := time.NewTimer(0)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-retry.C:
		}
		busy, err := round(ctx)
		s.relayedMu.Lock()
		close(s.relayed)
		s.relayed = make(chan struct{})
		s.relayedMu.Unlock()
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			retry.Reset(relayRetry)
		case busy:
			retry.Reset(0)
		}
	}
}

// Relayed returns a channel closed when the next relay round (bus or HSM)
// has ended, successful or not.
func (s *Server) Relayed() <-chan struct{} {
	s.relayedMu.Lock()
	defer s.relayedMu.Unlock()
	return s.relayed
}

// handOver gives the bus relay the outbox rows just committed and, when
// the commit stored unknown MACs (newMACs), wakes the HSM relay (its round
// reads the pending MACs from the database: not once per commit).
func (s *Server) handOver(rows []outboxRow, newMACs bool) {
	s.outMu.Lock()
	s.outbox = append(s.outbox, rows...)
	s.outMu.Unlock()
	wake(s.stored)
	if newMACs {
		wake(s.storedHSM)
	}
}

// wake signals ch without waiting (a signal already pending is enough).
func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// publish sends the oldest committed events to the bus; the writer deletes
// the outbox rows whose events all went in its next transaction (one fsync
// for both), so a crash in between publishes them again: at least once,
// never lost.
func (s *Server) publish(ctx context.Context) (bool, error) {
	if s.cfg.Publisher == nil {
		return false, nil
	}
	s.outMu.Lock()
	rows := s.outbox[:min(len(s.outbox), relayBatch)]
	s.outMu.Unlock()
	if len(rows) == 0 {
		return false, nil
	}
	msgs := make([]bus.Message, len(rows))
	for i, r := range rows {
		msgs[i] = bus.Message{Topic: lease.Topic, Key: []byte(lease.Key(r.mac)), Value: r.event}
	}
	if err := s.cfg.Publisher.Publish(ctx, lease.Topic, msgs...); err != nil {
		s.m.publishErrors.Inc()
		s.cfg.Log.Warn("dhcp_publish_failed", "events", len(msgs), "err", err)
		return false, err
	}
	s.m.published.Add(float64(len(msgs)))
	s.outMu.Lock()
	s.outbox = s.outbox[len(rows):]
	busy := len(s.outbox) > 0
	s.outMu.Unlock()
	// An outbox row holds the events of one commit; it may go once all of
	// them are published.
	last := rows[len(rows)-1]
	if pub := last.seq - 1; last.last {
		s.published.Store(last.seq)
	} else if pub > 0 {
		s.published.Store(pub)
	}
	// The writer is not woken for the delete: it goes with the next group
	// commit, or the expirer's wake within a second when no lease changes.
	// A transaction of its own per relay round cost an fsync each, nearly
	// as many as the lease commits in a storm.
	return busy, nil
}

func (s *Server) writeHSM(ctx context.Context) (bool, error) {
	if s.cfg.HSM == nil {
		return false, nil
	}
	macs, err := s.store.pendingHSM(ctx, relayBatch)
	if err != nil || len(macs) == 0 {
		return false, err
	}
	var mu sync.Mutex
	done := map[string]string{}
	var errs []error
	var g errgroup.Group
	g.SetLimit(hsmWriters)
	for mac, ip := range macs {
		g.Go(func() error {
			err := s.createInterface(ctx, mac, ip)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else {
				done[mac] = ip
			}
			return nil
		})
	}
	_ = g.Wait()
	if err := errors.Join(errs...); err != nil {
		s.m.hsmErrors.Inc()
		s.cfg.Log.Warn("dhcp_hsm_write_failed", "macs", len(errs), "err", err)
	}
	s.m.hsmWrites.Add(float64(len(done)))
	return len(macs) == relayBatch, errors.Join(s.store.writtenHSM(ctx, done), errors.Join(errs...))
}

// createInterface writes an unknown MAC to HSM with an empty ComponentID,
// as CSM's DHCP helper does; a MAC HSM already has is left alone (its
// owner, if any, is HSM's business).
func (s *Server) createInterface(ctx context.Context, mac, ip string) error {
	ei := hsm.EthernetInterface{ID: hsmID(mac), MACAddress: mac, Description: "seen by DHCP",
		IPAddresses: []hsm.IPAddressMapping{{IPAddress: ip}}, LastUpdate: s.cfg.Now().UTC()}
	err := s.cfg.HSM.CreateEthernetInterface(ctx, ei)
	if errors.Is(err, problem.ErrConflict) {
		return nil
	}
	return err
}
