package scn

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultMetricSubscribers is how many subscriber names get their own
// series when RelayConfig.MetricSubscribers is not set.
const DefaultMetricSubscribers = 100

// otherSubscriber is the subscriber label shared by every name past the cap.
const otherSubscriber = "other"

type relayMetrics struct {
	published, busErrors, expired prometheus.Counter
	// dropped has no subscriber label: a dropped daemon subscribes
	// again under its name, a moved one under a new name; the log line
	// names it.
	dropped prometheus.Counter
	// The per-subscriber series are labelled by Subscriber, not by
	// subscription ID: an ID is new at every subscription (HSM restarted
	// empty, a dropped or deleted one subscribed again), so a series per
	// ID leaked and broke dashboards; a daemon keeps its name
	// (agent@host:port) across them.
	delivered, retries, skipped *prometheus.CounterVec
	deadLetters                 *prometheus.CounterVec
	outboxRows, retention       prometheus.Gauge
	names                       *subscriberLabels
}

func newRelayMetrics(reg prometheus.Registerer, retention float64, names int) relayMetrics {
	perSub := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"subscriber"})
	}
	m := relayMetrics{
		published:   prometheus.NewCounter(prometheus.CounterOpts{Name: "hsm_scn_bus_messages_total", Help: "SCN messages (one per component) accepted by the bus."}),
		busErrors:   prometheus.NewCounter(prometheus.CounterOpts{Name: "hsm_scn_bus_errors_total", Help: "Failed bus publish attempts (retried)."}),
		expired:     prometheus.NewCounter(prometheus.CounterOpts{Name: "hsm_scn_expired_total", Help: "Outbox rows dropped by the retention limit before every consumer had them."}),
		delivered:   perSub("hsm_scn_delivered_total", "SCNs posted to a subscriber, by Subscriber name."),
		retries:     perSub("hsm_scn_delivery_retries_total", "Failed posts to a subscriber (retried), by Subscriber name."),
		deadLetters: perSub("hsm_scn_dead_letters_total", "SCNs a subscriber refused for good (4xx other than 408/429), moved aside, by Subscriber name."),
		skipped:     perSub("hsm_scn_missed_total", "SCNs a subscriber never got because they expired first, by Subscriber name."),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "hsm_scn_subscriptions_dropped_total",
			Help: "Subscriptions deleted because their deliveries had failed for the dead-after bound."}),
		outboxRows: prometheus.NewGauge(prometheus.GaugeOpts{Name: "hsm_scn_outbox_rows", Help: "Rows in the SCN outbox after the last compaction."}),
		retention:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "hsm_scn_retention_seconds", Help: "How long an undelivered SCN is kept."}),
		names:      &subscriberLabels{cap: names, own: map[string]bool{}},
	}
	m.retention.Set(retention)
	if reg != nil {
		reg.MustRegister(m.published, m.busErrors, m.expired, m.delivered, m.retries,
			m.skipped, m.deadLetters, m.dropped, m.outboxRows, m.retention)
	}
	return m
}

// subscriberLabels gives the first cap Subscriber names seen their own
// label value and every later one "other", so subscribers that change
// name (CSM hmnfd's <pod>_<n> after each pod restart) cannot grow the
// series without bound.
type subscriberLabels struct {
	mu  sync.Mutex
	cap int
	own map[string]bool
}

// label returns the subscriber label value for name.
func (l *subscriberLabels) label(name string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.own[name] {
		return name
	}
	if len(l.own) >= l.cap || name == otherSubscriber {
		return otherSubscriber
	}
	l.own[name] = true
	return name
}
