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
// A sender has no goroutine of its own: the scheduler's workers run it (see
// sched), one batch at a time.
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

	// scheduled: the sender is in the ready queue, a worker runs it, or a
	// retry timer will put it back; exactly one of them owns it.
	scheduled bool
	closed    bool
	attempt   int         // failed attempts at the current head
	single    int         // the next entries go one per POST (a batch was refused)
	timer     *time.Timer // pending retry
}

func newSender(svc *Service, url string) *sender {
	label := svc.m.label(url)
	sd := &sender{svc: svc, url: url, label: label,
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

// close stops the sender: it is not run again (a POST in flight finishes).
func (sd *sender) close() {
	sd.mu.Lock()
	sd.closed = true
	if sd.timer != nil {
		sd.timer.Stop()
	}
	sd.mu.Unlock()
}

// wakeLocked hands the sender to the scheduler unless it already has an
// owner; called with sd.mu held.
func (sd *sender) wakeLocked() {
	if sd.scheduled || sd.closed {
		return
	}
	sd.scheduled = true
	sd.svc.sched.add(sd)
}

// reload tells the sender that n more deliveries wait in the database
// (moved to its URL), to be read back in order.
func (sd *sender) reload(n int) {
	sd.mu.Lock()
	sd.backlog += n
	sd.spilled = true
	sd.gen++
	sd.wakeLocked()
	sd.mu.Unlock()
	sd.backlogG.Add(float64(n))
}

// push appends freshly queued deliveries, taking ps over (the caller must
// not change it, and its capacity must end at its length); committed says
// whether they are in the database yet. Deliveries that do not fit in memory spill to the
// database, so before the commit they are refused (pushed false) and the
// caller pushes them again after it. wake reports that the sender must be
// handed to the scheduler (sched.addAll) by the caller, who wakes many
// senders at once.
func (sd *sender) push(ps []pending, committed bool) (wake, pushed bool) {
	n := len(ps)
	sd.mu.Lock()
	if committed {
		// Refused before the commit, they are in the database now, and a
		// load that read it after the commit may have taken them already
		// (and found the backlog drained, so the sender is no longer
		// spilled): those must not be queued twice.
		for len(ps) > 0 && ps[0].id <= sd.cursor {
			ps = ps[1:]
		}
	}
	fits := !sd.spilled && len(sd.buf)+len(ps) <= sd.svc.cfg.MemQueue
	if !fits && !committed {
		sd.mu.Unlock()
		return false, false
	}
	sd.backlog += n
	switch {
	case len(ps) == 0:
	case fits && len(sd.buf) == 0:
		// Taken as is, not copied: one allocation less per subscriber
		// and SCN (the caller gives each sender its own slice, with no
		// room to grow into another's).
		sd.buf = ps
		sd.cursor = ps[len(ps)-1].id
	case fits:
		sd.buf = append(sd.buf, ps...)
		sd.cursor = ps[len(ps)-1].id
	default:
		sd.spilled = true
		sd.gen++
	}
	if !sd.scheduled && !sd.closed {
		sd.scheduled, wake = true, true
	}
	sd.mu.Unlock()
	sd.backlogG.Add(float64(n))
	return wake, true
}

// step sends the next batch, once, and then hands the sender back: to the
// tail of the ready queue if more is queued, to a retry timer after a
// failure, or to nobody when the queue is empty (the next push wakes it).
func (sd *sender) step(ctx context.Context) {
	batch := sd.head(ctx)
	if batch == nil {
		return
	}
	err := sd.post(ctx, body(batch))
	switch {
	case err == nil:
		sd.attempt = 0
		sd.acked(batch)
		sd.again()
	case ctx.Err() != nil:
		// Shutting down: the batch stays queued in the database.
	case errors.Is(err, httpclient.ErrRefused):
		sd.refused(ctx, batch, err)
	default:
		sd.retries.Inc()
		sd.failed(err, sd.attempt)
		if sd.expired(batch[0]) {
			sd.svc.expire(ctx, sd.url)
			return
		}
		sd.retryAfter(sd.backoff(sd.attempt))
		sd.attempt++
	}
}

// head returns the next batch: the first queued entry and the consecutive
// entries with the same attributes after it, up to BatchMax. When nothing is
// queued it gives the sender up and returns nil.
func (sd *sender) head(ctx context.Context) []pending {
	for {
		sd.mu.Lock()
		if sd.closed {
			sd.mu.Unlock()
			return nil
		}
		if len(sd.buf) > 0 {
			maxN := int(sd.svc.batchMax.Load())
			if sd.single > 0 {
				maxN = 1
			}
			n := batchLen(sd.buf, maxN)
			b := sd.buf[:n:n]
			sd.mu.Unlock()
			return b
		}
		if !sd.spilled {
			sd.scheduled = false // in the same critical section as the check: a push now wakes it again
			sd.mu.Unlock()
			return nil
		}
		gen, cursor := sd.gen, sd.cursor
		sd.mu.Unlock()
		if !sd.load(ctx, gen, cursor) {
			return nil
		}
	}
}

// again puts the sender back at the tail of the ready queue, or gives it up
// when nothing is queued.
func (sd *sender) again() {
	sd.mu.Lock()
	defer sd.mu.Unlock()
	if sd.closed {
		return
	}
	if len(sd.buf) == 0 && !sd.spilled {
		sd.scheduled = false
		return
	}
	sd.svc.sched.add(sd)
}

// retryAfter puts the sender back in the ready queue after d.
func (sd *sender) retryAfter(d time.Duration) {
	sd.mu.Lock()
	defer sd.mu.Unlock()
	if sd.closed {
		return
	}
	sd.timer = time.AfterFunc(d, func() {
		sd.mu.Lock()
		defer sd.mu.Unlock()
		if !sd.closed {
			sd.svc.sched.add(sd)
		}
	})
}

// load reads the next part of a spilled backlog from the database; false
// when it failed (a retry is scheduled).
func (sd *sender) load(ctx context.Context, gen uint64, cursor int64) bool {
	limit := sd.svc.cfg.MemQueue
	rows, last, more, err := sd.svc.store.loadQueue(ctx, sd.tid, cursor, limit)
	if err != nil {
		if ctx.Err() == nil {
			sd.svc.log.Error("backlog_load_failed", "subscriber", redact.URL(sd.url), "err", err)
			sd.retryAfter(sd.svc.cfg.RetryMax)
		}
		return false
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
	sd.cursor = max(sd.cursor, last)
	if !more && sd.gen == gen {
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

// refused handles a batch the subscriber refused for good. A batch of
// several SCNs may have been refused as a whole (too large, say), so its
// SCNs are sent again one by one; a single SCN refused becomes a dead letter.
func (sd *sender) refused(ctx context.Context, batch []pending, err error) {
	if len(batch) > 1 {
		sd.mu.Lock()
		sd.single = len(batch)
		sd.mu.Unlock()
		sd.again()
		return
	}
	if sd.deadLetter(ctx, batch[0], err) {
		sd.attempt = 0
		sd.again()
		return
	}
	if ctx.Err() == nil {
		sd.retryAfter(sd.backoff(sd.attempt))
		sd.attempt++
	}
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

// expired reports whether the backlog passed a retention limit.
func (sd *sender) expired(head pending) bool {
	sd.mu.Lock()
	n := sd.backlog
	sd.mu.Unlock()
	age := sd.svc.cfg.Now().UnixNano() - head.enqueued
	return n > sd.svc.cfg.RetentionCount || time.Duration(age) > sd.svc.cfg.RetentionAge
}

// post sends b once. The scheduler's workers bound the POSTs in flight.
func (sd *sender) post(ctx context.Context, b []byte) error {
	sd.svc.inFlight.Add(1)
	defer sd.svc.inFlight.Add(-1)
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
	if sd.svc.cfg.Auth != nil && sd.svc.cfg.AuthHosts.Allows(req.URL.Hostname()) {
		tok, err := sd.svc.cfg.Auth(ctx)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
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
	sd.svc.acks.add(sd.tid, batch)
	sd.mu.Lock()
	sd.buf = sd.buf[len(batch):]
	if len(sd.buf) == 0 {
		sd.buf = nil // let the old backing array go
	}
	sd.backlog -= len(batch)
	sd.single = max(0, sd.single-len(batch))
	wasDown := sd.down
	sd.down = false
	sd.mu.Unlock()
	if wasDown {
		sd.svc.log.Info("subscriber_reachable", "subscriber", redact.URL(sd.url))
	}
	sd.backlogG.Sub(float64(len(batch)))
}
