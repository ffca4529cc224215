package fanout

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/internal/redact"
)

// otherLabel is the subscriber label shared by every subscriber URL past the
// per-subscriber label cap.
const otherLabel = "other"

// metrics are hmnfd's Prometheus series. Per-subscriber series are labelled
// with the subscriber URL for the first cap URLs seen; later URLs share
// subscriber="other" so a large system cannot blow up the series count.
type metrics struct {
	received    *prometheus.CounterVec
	duplicates  prometheus.Counter
	malformed   prometheus.Counter
	backlog     *prometheus.GaugeVec
	delivered   *prometheus.CounterVec
	retries     *prometheus.CounterVec
	deadLetters *prometheus.CounterVec
	expiries    *prometheus.CounterVec
	expiredSCN  prometheus.Counter
	latency     prometheus.Histogram
	subs        prometheus.Gauge

	mu     sync.Mutex
	labels map[string]string
	cap    int
}

func newMetrics(reg prometheus.Registerer, labelCap int) *metrics {
	m := &metrics{
		received: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hmnfd_scns_received_total",
			Help: "SCNs taken in, by source (bus or http)."}, []string{"source"}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{Name: "hmnfd_scns_duplicate_total",
			Help: "SCNs dropped at intake because their sequence number was already seen for that component."}),
		malformed: prometheus.NewCounter(prometheus.CounterOpts{Name: "hmnfd_scns_malformed_total",
			Help: "Bus messages that were not a valid SCN and were skipped."}),
		backlog: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "hmnfd_subscriber_backlog",
			Help: "SCNs queued and not yet acknowledged, per subscriber URL."}, []string{"subscriber"}),
		delivered: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hmnfd_deliveries_total",
			Help: "SCNs acknowledged by the subscriber (2xx), per subscriber URL."}, []string{"subscriber"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hmnfd_delivery_retries_total",
			Help: "Failed delivery attempts that will be retried, per subscriber URL."}, []string{"subscriber"}),
		deadLetters: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hmnfd_dead_letters_total",
			Help: "Deliveries a subscriber refused for good (4xx other than 408/429), set aside, per subscriber URL."}, []string{"subscriber"}),
		expiries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hmnfd_subscriber_expiries_total",
			Help: "Subscribers removed because their backlog passed the retention limit."}, []string{"subscriber"}),
		expiredSCN: prometheus.NewCounter(prometheus.CounterOpts{Name: "hmnfd_scns_expired_total",
			Help: "Queued SCNs discarded with an expired subscriber."}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "hmnfd_delivery_latency_seconds",
			Help:    "From the SCN's Timestamp to the subscriber's acknowledgement.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 14)}),
		subs: prometheus.NewGauge(prometheus.GaugeOpts{Name: "hmnfd_subscriptions",
			Help: "Subscriptions held."}),
		labels: map[string]string{},
		cap:    labelCap,
	}
	reg.MustRegister(m.received, m.duplicates, m.malformed, m.backlog, m.delivered, m.retries, m.deadLetters,
		m.expiries, m.expiredSCN, m.latency, m.subs)
	return m
}

// label returns the subscriber label value for url.
func (m *metrics) label(url string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.labels[url]; ok {
		return l
	}
	l := otherLabel
	if len(m.labels) < m.cap {
		l = redact.URL(url) // /metrics is read by more people than the API
	}
	m.labels[url] = l
	return l
}
