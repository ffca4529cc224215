package scn

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// RelayConfig configures a Relay. Zero values take the defaults noted.
type RelayConfig struct {
	// Publisher receives one message per component per SCN; nil disables the bus.
	Publisher bus.Publisher
	// Topic is the bus topic (bus.TopicSCN).
	Topic string
	// Client posts to subscriber callbacks (a client with a 10 s timeout).
	Client *http.Client
	// Retention is how long an SCN no consumer has taken is kept (24 h).
	Retention time.Duration
	// CompactEvery is how often published rows are compacted (10 s).
	CompactEvery time.Duration
	// MinBackoff and MaxBackoff bound the retry delay per consumer (1 s, 1 min).
	MinBackoff, MaxBackoff time.Duration
	// DeadAfter drops a subscription whose deliveries have failed, without
	// a success, for this long, with its outbox cursor (0: never). Refusals
	// (dead letters) are answers, not failures.
	DeadAfter time.Duration
	// After is the clock used for waits (time.After); tests inject their own.
	After func(time.Duration) <-chan time.Time
	// Registerer receives the relay metrics; nil registers nothing.
	Registerer prometheus.Registerer
	// MetricSubscribers is how many Subscriber names get their own
	// per-subscriber series; later ones share subscriber="other"
	// (DefaultMetricSubscribers).
	MetricSubscribers int
	Log               *slog.Logger
}

// Relay publishes the SCN outbox, in order, to the bus and to each
// /Subscriptions/SCN callback. Every consumer has a cursor in the database,
// advanced only after delivery, so after a crash delivery resumes where it
// stopped: SCNs may repeat (consumers dedupe by Seq) but are not lost, unless
// a consumer stays away longer than the retention limit, or a subscriber
// refuses one for good (it becomes a dead letter, see deadLetter).
type Relay struct {
	store *Store
	cfg   RelayConfig
	m     relayMetrics
}

// NewRelay returns a relay over store's outbox.
func NewRelay(store *Store, cfg RelayConfig) *Relay {
	if cfg.Topic == "" {
		cfg.Topic = bus.TopicSCN
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Retention <= 0 {
		cfg.Retention = 24 * time.Hour
	}
	if cfg.CompactEvery <= 0 {
		cfg.CompactEvery = 10 * time.Second
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = time.Second
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(time.Minute, cfg.MinBackoff)
	}
	if cfg.After == nil {
		cfg.After = time.After
	}
	if cfg.MetricSubscribers <= 0 {
		cfg.MetricSubscribers = DefaultMetricSubscribers
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Relay{store: store, cfg: cfg, m: newRelayMetrics(cfg.Registerer, cfg.Retention.Seconds(), cfg.MetricSubscribers)}
}

// Run relays until ctx is cancelled.
func (r *Relay) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	if r.cfg.Publisher != nil {
		g.Go(func() error { return r.runBus(ctx) })
	}
	g.Go(func() error { return r.runSubscribers(ctx) })
	g.Go(func() error { return r.runCompactor(ctx) })
	err := g.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// Wait blocks for d on the relay clock; false means ctx ended.
func (r *Relay) wait(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-r.cfg.After(d):
		return true
	}
}

// busMaxMessages caps the messages of one Publish: a bulk update stores one
// row naming up to 100,000 components, and 256 of those after an outage
// would otherwise be one call of millions of messages built in memory.
const busMaxMessages = 50_000

// runBus publishes outbox rows to the bus, one message per component, key =
// xname, and advances the "bus" cursor past every row the bus accepted.
func (r *Relay) runBus(ctx context.Context) error {
	cur, err := r.store.core.Cursor(ctx, "bus")
	if err != nil {
		return err
	}
	backoff := r.cfg.MinBackoff
	for {
		wake := r.store.outbox.Wait()
		rows, err := r.store.core.OutboxAfter(ctx, cur, core.OutboxBatchRows)
		if err == nil && len(rows) == 0 {
			if !core.Idle(ctx, wake) {
				return nil
			}
			continue
		}
		if err == nil {
			if gap := rows[0].Seq - cur - 1; gap > 0 {
				r.cfg.Log.WarnContext(ctx, "scn_bus_missed_expired", "count", gap, "after_seq", cur)
			}
			var done int64
			done, err = r.publish(ctx, rows)
			if done > cur {
				cur = done
				if cerr := r.store.core.SetCursor(context.WithoutCancel(ctx), "bus", cur); cerr != nil && err == nil {
					err = cerr
				}
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			r.m.busErrors.Inc()
			r.cfg.Log.WarnContext(ctx, "scn_bus_publish_failed", "after_seq", cur, "err", err)
			if !r.wait(ctx, backoff) {
				return nil
			}
			backoff = min(2*backoff, r.cfg.MaxBackoff)
			continue
		}
		backoff = r.cfg.MinBackoff
	}
}

// publish sends rows, one message per component, in calls of at most
// busMaxMessages, and returns the Seq of the last row all of whose messages
// the bus accepted (a row cut short is sent whole again next time).
func (r *Relay) publish(ctx context.Context, rows []core.OutboxRow) (done int64, err error) {
	var msgs []bus.Message
	var complete int64 // last row whose messages are all in msgs or sent
	flush := func() error {
		if len(msgs) == 0 {
			return nil
		}
		if err := r.cfg.Publisher.Publish(ctx, r.cfg.Topic, msgs...); err != nil {
			return fmt.Errorf("publish scns: %w", err)
		}
		r.m.published.Add(float64(len(msgs)))
		msgs = msgs[:0]
		done = complete
		return nil
	}
	for _, row := range rows {
		one := row.SCN
		for _, id := range row.SCN.Components {
			one.Components = []string{id}
			b, err := json.Marshal(&one)
			if err != nil {
				return done, fmt.Errorf("encode scn %d: %w", row.Seq, err)
			}
			msgs = append(msgs, bus.Message{Key: []byte(id), Value: b, Time: row.SCN.Timestamp})
			if len(msgs) >= busMaxMessages {
				if err := flush(); err != nil {
					return done, err
				}
			}
		}
		complete = row.Seq
	}
	if err := flush(); err != nil {
		return done, err
	}
	return complete, nil
}

// runCompactor deletes published and expired outbox rows periodically.
func (r *Relay) runCompactor(ctx context.Context) error {
	for r.wait(ctx, r.cfg.CompactEvery) {
		r.Compact(ctx)
	}
	return nil
}

// Compact runs one compaction now; none in the first NewDatabaseReplay
// of the database, whose SCNs a daemon subscribing again then still gets.
func (r *Relay) Compact(ctx context.Context) {
	if r.store.replaying() {
		return
	}
	expired, err := r.store.core.CompactOutbox(ctx, r.store.now().Add(-r.cfg.Retention))
	if err != nil {
		r.cfg.Log.WarnContext(ctx, "scn_outbox_compaction_failed", "err", err)
		return
	}
	r.m.expired.Add(float64(expired))
	if n, err := r.store.core.OutboxLen(ctx); err == nil {
		r.m.outboxRows.Set(float64(n))
	}
}

// runSubscribers keeps one delivery goroutine per subscription, restarted
// when the subscription changes and stopped when it is deleted.
func (r *Relay) runSubscribers(ctx context.Context) error {
	type worker struct {
		sub    hsm.Subscription
		cancel context.CancelFunc
	}
	running := map[int64]worker{}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		wake := r.store.subs.Wait()
		subs, err := r.store.subscriptions(ctx)
		if err != nil && ctx.Err() == nil {
			r.cfg.Log.WarnContext(ctx, "scn_subscriptions_read_failed", "err", err)
		}
		want := map[int64]hsm.Subscription{}
		for _, s := range subs {
			want[s.ID] = s
		}
		for id, w := range running {
			if s, ok := want[id]; !ok || !sameSub(s, w.sub) {
				w.cancel()
				delete(running, id)
			}
		}
		for id, s := range want {
			if _, ok := running[id]; !ok {
				wctx, cancel := context.WithCancel(ctx)
				running[id] = worker{sub: s, cancel: cancel}
				wg.Go(func() { r.deliver(wctx, s) })
			}
		}
		if !core.Idle(ctx, wake) {
			return nil
		}
	}
}

func sameSub(a, b hsm.Subscription) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
