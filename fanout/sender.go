package fanout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/internal/httpclient"
	"github.com/hmsuite/hms/internal/redact"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// pending is one queued delivery as a sender holds it.
type pending struct {
	id       int64    // of the SCN body (scns.id)
	scn      *hsm.SCN // shared by every pending entry of the same body
	payload  []byte
	enqueued int64 // unix nanoseconds
}

// sender delivers one subscriber URL's queue in order. The head of the queue
// is kept in memory (at most MemQueue entries); when more arrive while it is
// full the sender is "spilled" and reads the rest back from the database.
type sender struct {
	svc    *Service
	url    string
	label  string
	target *h1Target // nil: send with net/http
	tid    int64     // the URL's id in the store

	// The sender's series, looked up once.
	delivered, retries, deadLetters prometheus.Counter
	backlogG                        prometheus.Gauge

	mu      sync.Mutex
	buf     []pending
	spilled bool
	gen     uint64 // bumped on every spill, so a load racing a spill is noticed
	cursor  int64  // highest queue id taken into buf
	backlog int
	down    bool // the last attempt failed

	kick     chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
}

func newSender(svc *Service, url string) *sender {
	label := svc.m.label(url)
	sd := &sender{svc: svc, url: url, label: label, kick: make(chan struct{}, 1), stop: make(chan struct{}),
		delivered: svc.m.delivered.WithLabelValues(label), retries: svc.m.retries.WithLabelValues(label),
		deadLetters: svc.m.deadLetters.WithLabelValues(label),
		backlogG:    svc.m.backlog.WithLabelValues(label), tid: svc.store.target(url)}
	if svc.h1 != nil && !proxied(url) {
		if t, ok := newH1Target(url); ok {
			sd.target = &t
		}
	}
	return sd
}

// proxied reports whether the environment sends url through a proxy, which
// only net/http knows how to use.
func proxied(url string) bool {
	req, err := http.NewRequest(http.MethodPost, url, nil)
	if err != nil {
		return false
	}
	p, err := http.ProxyFromEnvironment(req)
	return err != nil || p != nil
}

func (sd *sender) close() { sd.stopOnce.Do(func() { close(sd.stop) }) }

// reload tells the sender that n more deliveries wait in the database
// (moved to its URL), to be read back in order.
func (sd *sender) reload(n int) {
	sd.mu.Lock()
	sd.backlog += n
	sd.spilled = true
	sd.gen++
	sd.mu.Unlock()
	sd.backlogG.Add(float64(n))
	select {
	case sd.kick <- struct{}{}:
	default:
	}
}

// push appends freshly committed deliveries.
func (sd *sender) push(ps []pending) {
	sd.mu.Lock()
	sd.backlog += len(ps)
	if !sd.spilled && len(sd.buf)+len(ps) <= sd.svc.cfg.MemQueue {
		sd.buf = append(sd.buf, ps...)
		sd.cursor = ps[len(ps)-1].id
	} else {
		sd.spilled = true
		sd.gen++
	}
	sd.mu.Unlock()
	sd.backlogG.Add(float64(len(ps)))
	select {
	case sd.kick <- struct{}{}:
	default:
	}
}

// run delivers until ctx is cancelled or the sender is stopped.
func (sd *sender) run(ctx context.Context) {
	for {
		batch := sd.head(ctx)
		if batch == nil {
			return
		}
		if !sd.deliver(ctx, batch) {
			return
		}
	}
}

// head waits for the next batch: the first queued entry and the consecutive
// entries with the same attributes after it, up to BatchMax. It returns nil
// when the sender should stop.
func (sd *sender) head(ctx context.Context) []pending {
	for {
		sd.mu.Lock()
		if len(sd.buf) > 0 {
			n := batchLen(sd.buf, int(sd.svc.batchMax.Load()))
			b := sd.buf[:n:n]
			sd.mu.Unlock()
			return b
		}
		spilled, gen, cursor := sd.spilled, sd.gen, sd.cursor
		sd.mu.Unlock()
		if spilled {
			if !sd.load(ctx, gen, cursor) {
				return nil
			}
			continue
		}
		select {
		case <-sd.kick:
		case <-sd.stop:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// load reads the next part of a spilled backlog from the database.
func (sd *sender) load(ctx context.Context, gen uint64, cursor int64) bool {
	limit := sd.svc.cfg.MemQueue
	rows, err := sd.svc.store.loadQueue(ctx, sd.tid, cursor, limit)
	if err != nil {
		sd.svc.log.Error("backlog_load_failed", "subscriber", redact.URL(sd.url), "err", err)
		return sd.wait(ctx, sd.svc.cfg.RetryMax)
	}
	ps := make([]pending, 0, len(rows))
	for _, r := range rows {
		p := pending{id: r.id, scn: &hsm.SCN{}, payload: r.body, enqueued: r.enqueued}
		if err := json.Unmarshal(r.body, p.scn); err != nil {
			// Only hmnfd writes the queue; an unreadable row is still delivered as is.
			sd.svc.log.Warn("queued_scn_unreadable", "subscriber", redact.URL(sd.url), "id", r.id, "err", err)
		}
		ps = append(ps, p)
	}
	sd.mu.Lock()
	defer sd.mu.Unlock()
	sd.buf = append(sd.buf, ps...)
	if len(ps) > 0 {
		sd.cursor = ps[len(ps)-1].id
	}
	if len(ps) < limit && sd.gen == gen {
		sd.spilled = false
	}
	return true
}

// batchLen is how many entries from the head of buf form one POST.
func batchLen(buf []pending, maxN int) int {
	n := 1
	for n < len(buf) && n < maxN && sameAttrs(buf[0].scn, buf[n].scn) {
		n++
	}
	return n
}

func sameAttrs(a, b *hsm.SCN) bool {
	return a.State == b.State && a.Flag == b.Flag && a.Role == b.Role && a.SubRole == b.SubRole &&
		a.SoftwareStatus == b.SoftwareStatus && (a.Enabled == nil) == (b.Enabled == nil) &&
		(a.Enabled == nil || *a.Enabled == *b.Enabled) && a.NID == nil && b.NID == nil
}

// body is the POST body for batch.
func body(batch []pending) []byte {
	if len(batch) == 1 {
		return batch[0].payload
	}
	d := delivery{SCN: *batch[0].scn, Seqs: make([]int64, 0, len(batch))}
	d.Components = nil
	for _, p := range batch {
		d.Components = append(d.Components, p.scn.Components...)
		d.Seqs = append(d.Seqs, p.scn.Seq)
	}
	d.Seq = batch[len(batch)-1].scn.Seq
	b, _ := json.Marshal(d) // an SCN always marshals
	return b
}

// deliver POSTs batch until it is acknowledged, the subscriber expires, or the
// sender stops; it reports whether the sender should go on.
func (sd *sender) deliver(ctx context.Context, batch []pending) bool {
	b := body(batch)
	for attempt := 0; ; attempt++ {
		err := sd.post(ctx, b)
		if err == nil {
			sd.acked(batch)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		if errors.Is(err, httpclient.ErrRefused) {
			return sd.refused(ctx, batch, err)
		}
		sd.retries.Inc()
		sd.failed(err, attempt)
		if sd.expired(batch[0]) {
			sd.svc.expire(ctx, sd.url)
			return false
		}
		if !sd.wait(ctx, sd.backoff(attempt)) {
			return false
		}
	}
}

// refused handles a batch the subscriber refused for good. A batch of
// several SCNs may have been refused as a whole (too large, say), so its
// SCNs are sent again one by one; a single SCN refused becomes a dead letter.
func (sd *sender) refused(ctx context.Context, batch []pending, err error) bool {
	if len(batch) == 1 {
		return sd.deadLetter(ctx, batch[0], err)
	}
	for i := range batch {
		if !sd.deliver(ctx, batch[i:i+1]) {
			return false
		}
	}
	return true
}

func (sd *sender) failed(err error, attempt int) {
	sd.mu.Lock()
	wasDown := sd.down
	sd.down = true
	backlog := sd.backlog
	sd.mu.Unlock()
	if !wasDown {
		sd.svc.log.Warn("subscriber_unreachable", "subscriber", redact.URL(sd.url), "backlog", backlog, "err", err)
	} else {
		sd.svc.log.Debug("delivery_retry", "subscriber", redact.URL(sd.url), "attempt", attempt, "err", err)
	}
}

// backoff is a full-jitter exponential delay for attempt.
func (sd *sender) backoff(attempt int) time.Duration {
	lo, hi := time.Duration(sd.svc.retryMin.Load()), sd.svc.cfg.RetryMax
	d := lo << min(attempt, 20)
	if d > hi || d <= 0 {
		d = hi
	}
	return lo/2 + rand.N(d-lo/2+1)
}

// wait sleeps d; false if the sender should stop instead.
func (sd *sender) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-sd.stop:
		return false
	case <-ctx.Done():
		return false
	}
}

// expired reports whether the backlog passed a retention limit.
func (sd *sender) expired(head pending) bool {
	sd.mu.Lock()
	n := sd.backlog
	sd.mu.Unlock()
	age := sd.svc.cfg.Now().UnixNano() - head.enqueued
	return n > sd.svc.cfg.RetentionCount || time.Duration(age) > sd.svc.cfg.RetentionAge
}

func (sd *sender) post(ctx context.Context, b []byte) error {
	select {
	case sd.svc.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-sd.svc.sem }()
	if sd.target != nil {
		return sd.svc.h1.post(ctx, sd.target, b)
	}
	rctx, cancel := context.WithTimeout(ctx, sd.svc.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, sd.url, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := sd.svc.cfg.Client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("subscriber %w", httpclient.StatusError(resp.StatusCode))
	}
	return nil
}

// acked records a delivered batch and drops it from the head of the queue.
func (sd *sender) acked(batch []pending) {
	now := sd.svc.cfg.Now()
	for _, p := range batch {
		sd.svc.m.latency.Observe(now.Sub(p.scn.Timestamp).Seconds())
	}
	sd.drop(batch)
	sd.delivered.Add(float64(len(batch)))
}

// drop removes batch, delivered or dead-lettered, from the head of the
// queue; the subscriber answered, so it is reachable.
func (sd *sender) drop(batch []pending) {
	keys := make([]qkey, len(batch))
	for i, p := range batch {
		keys[i] = qkey{target: sd.tid, scn: p.id}
	}
	sd.svc.ack(keys)
	sd.mu.Lock()
	sd.buf = sd.buf[len(batch):]
	if len(sd.buf) == 0 {
		sd.buf = nil // let the old backing array go
	}
	sd.backlog -= len(batch)
	wasDown := sd.down
	sd.down = false
	sd.mu.Unlock()
	if wasDown {
		sd.svc.log.Info("subscriber_reachable", "subscriber", redact.URL(sd.url))
	}
	sd.backlogG.Sub(float64(len(batch)))
}
