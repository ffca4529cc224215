package heartbeat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/httpclient"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// MaxBulkIDs caps the ComponentIDs of one BulkStateData call.
const MaxBulkIDs = 5000

// HSMNotifier tells HSM about node state changes with coalesced bulk calls,
// retrying with backoff until HSM accepts them.
type HSMNotifier struct {
	q        *queue
	client   *http.Client
	log      *slog.Logger
	baseURL  atomic.Pointer[string]
	timeout  atomic.Int64
	disabled atomic.Bool
	status   atomic.Pointer[string]
	rejected prometheus.Counter
}

// NewHSMNotifier returns a notifier sending to the HSM at baseURL (such as
// http://127.0.0.1:27779; /hsm/v2 is appended). client nil means a default client.
func NewHSMNotifier(baseURL string, client *http.Client, log *slog.Logger, reg prometheus.Registerer) *HSMNotifier {
	if client == nil {
		client = &http.Client{}
	}
	n := &HSMNotifier{client: client, log: log, rejected: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hbtd_hsm_rejected_total",
		Help: "Node changes dropped because HSM refused the call with a 4xx status.",
	})}
	n.SetURL(baseURL)
	n.SetTimeout(10 * time.Second)
	st := "Not contacted yet"
	n.status.Store(&st)
	n.q = newQueue("hsm", n.deliver, log, reg)
	if reg != nil {
		reg.MustRegister(n.rejected)
	}
	return n
}

// SetURL changes the HSM base URL; a trailing /hsm/v2 is accepted and dropped.
func (n *HSMNotifier) SetURL(baseURL string) {
	u := strings.TrimSuffix(strings.TrimRight(baseURL, "/"), "/hsm/v2")
	n.baseURL.Store(&u)
}

// URL returns the HSM base URL.
func (n *HSMNotifier) URL() string { return *n.baseURL.Load() }

// SetTimeout bounds each call to HSM.
func (n *HSMNotifier) SetTimeout(d time.Duration) { n.timeout.Store(int64(d)) }

// SetDisabled turns HSM calls off (the Nosm parameter); changes are dropped.
func (n *HSMNotifier) SetDisabled(off bool) { n.disabled.Store(off) }

// Status is the outcome of the last call to HSM, for /health.
func (n *HSMNotifier) Status() string { return *n.status.Load() }

// Pending is the number of nodes whose change HSM has not accepted yet.
func (n *HSMNotifier) Pending() int { return n.q.Len() }

// Enqueue queues changes for HSM. While HSM calls are off (Nosm) changes
// are dropped, and confirmed as such so a restart does not send them.
func (n *HSMNotifier) Enqueue(changes ...Change) {
	n.q.offer(n.disabled.Load(), changes)
}

// Run sends queued changes until ctx is cancelled.
func (n *HSMNotifier) Run(ctx context.Context) error { return n.q.Run(ctx) }

type groupKey struct{ state, flag, info string }

// deliver groups the batch by (State, Flag, Message), one bulk call per group
// (split at MaxBulkIDs), and returns the changes of the calls that failed.
func (n *HSMNotifier) deliver(ctx context.Context, batch []Change) []Change {
	groups := map[groupKey][]Change{}
	for _, c := range batch {
		k := groupKey{c.HSMState(), c.HSMFlag(), c.Info()}
		groups[k] = append(groups[k], c)
	}
	keys := make([]groupKey, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b groupKey) int { return strings.Compare(a.info, b.info) })
	var retry []Change
	for _, k := range keys {
		cs := groups[k]
		slices.SortFunc(cs, func(a, b Change) int { return strings.Compare(a.XName, b.XName) })
		for chunk := range slices.Chunk(cs, MaxBulkIDs) {
			retry = append(retry, n.send(ctx, k, chunk)...)
		}
	}
	return retry
}

// errRejected marks an HSM answer that retrying cannot fix.
type errRejected struct{ status int }

func (e errRejected) Error() string { return fmt.Sprintf("HSM refused the call: status %d", e.status) }

// send makes one bulk call for cs and returns the changes to try again.
func (n *HSMNotifier) send(ctx context.Context, k groupKey, cs []Change) (retry []Change) {
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		ids = append(ids, c.XName)
	}
	err := n.patch(ctx, k, ids)
	var rej errRejected
	switch {
	case err == nil:
		st := "Ready"
		n.status.Store(&st)
		return nil
	case errors.As(err, &rej) && rej.status == http.StatusNotFound && len(cs) > 1:
		// HSM refuses a whole bulk call for one component it does not have
		// (a node heartbeating before it was discovered): halve the call
		// until the unknown ones are alone, so the others still get through.
		half := len(cs) / 2
		return append(n.send(ctx, k, cs[:half]), n.send(ctx, k, cs[half:])...)
	case errors.As(err, &rej):
		n.rejected.Add(float64(len(cs)))
		if len(cs) == 1 {
			n.log.Error("hsm_rejected", "status", rej.status, "state", k.state, "flag", k.flag, "xname", cs[0].XName)
		} else {
			n.log.Error("hsm_rejected", "status", rej.status, "state", k.state, "flag", k.flag, "ids", len(cs))
		}
		return nil
	default:
		st := err.Error()
		n.status.Store(&st)
		return cs
	}
}

// patch sends one BulkStateData call. A 4xx answer other than 408 and 429
// is errRejected: sending the same call again cannot succeed.
func (n *HSMNotifier) patch(ctx context.Context, k groupKey, ids []string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(n.timeout.Load()))
	defer cancel()
	err := client.New(n.URL(), n.client, "hbtd").
		BulkStateData(ctx, ids, k.state, k.flag, false, &hsm.ExtendedInfo{Message: k.info})
	if st := httpclient.StatusCode(err); st >= 400 && st < 500 &&
		st != http.StatusRequestTimeout && st != http.StatusTooManyRequests {
		return errRejected{status: st}
	}
	return err
}

// BusNotifier publishes heartbeat change notifications on bus.TopicHeartbeat.
type BusNotifier struct {
	q        *queue
	pub      bus.Publisher
	disabled atomic.Bool
	status   atomic.Pointer[string]
}

// NewBusNotifier returns a notifier publishing to pub.
func NewBusNotifier(pub bus.Publisher, log *slog.Logger, reg prometheus.Registerer) *BusNotifier {
	b := &BusNotifier{pub: pub}
	st := "Connected and OPEN"
	b.status.Store(&st)
	b.q = newQueue("bus", b.deliver, log, reg)
	return b
}

// SetDisabled turns publishing off (Use_telemetry 0).
func (b *BusNotifier) SetDisabled(off bool) { b.disabled.Store(off) }

// Status describes the bus connection, for /health.
func (b *BusNotifier) Status() string {
	if b.disabled.Load() {
		return "Not in use"
	}
	return *b.status.Load()
}

// Enqueue queues changes for the bus; while publishing is off
// (Use_telemetry 0) they are dropped, as HSMNotifier.Enqueue drops them.
func (b *BusNotifier) Enqueue(changes ...Change) {
	b.q.offer(b.disabled.Load(), changes)
}

// Run publishes queued changes until ctx is cancelled.
func (b *BusNotifier) Run(ctx context.Context) error { return b.q.Run(ctx) }

func (b *BusNotifier) deliver(ctx context.Context, batch []Change) []Change {
	msgs := make([]bus.Message, 0, len(batch))
	for _, c := range batch {
		v, err := json.Marshal(c.busMessage())
		if err != nil {
			continue // cannot happen: plain strings
		}
		msgs = append(msgs, bus.Message{Key: []byte(c.XName), Value: v})
	}
	if err := b.pub.Publish(ctx, bus.TopicHeartbeat, msgs...); err != nil {
		st := "Publish failed: " + err.Error()
		b.status.Store(&st)
		return batch
	}
	st := "Connected and OPEN"
	b.status.Store(&st)
	return nil
}
