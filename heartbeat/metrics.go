package heartbeat

import "github.com/prometheus/client_golang/prometheus"

type trackerMetrics struct {
	beats       prometheus.Counter
	transitions *prometheus.CounterVec
	gaps        prometheus.Counter
}

func newTrackerMetrics(reg prometheus.Registerer, t *Tracker) *trackerMetrics {
	m := &trackerMetrics{
		beats: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hbtd_heartbeats_total", Help: "Heartbeats accepted.",
		}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hbtd_transitions_total", Help: "Node state transitions, by new state.",
		}, []string{"to"}),
		gaps: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hbtd_tracker_gaps_total",
			Help: "Pauses of the tracker over one second, and restarts, after which nodes got grace.",
		}),
	}
	if reg == nil {
		return m
	}
	nodes := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hbtd_nodes", Help: "Tracked nodes by state.",
	}, []string{"state"})
	reg.MustRegister(m.beats, m.transitions, m.gaps, &nodeCollector{t: t, desc: nodes})
	return m
}

// nodeCollector reports per-state node counts at scrape time.
type nodeCollector struct {
	t    *Tracker
	desc *prometheus.GaugeVec
}

func (c *nodeCollector) Describe(ch chan<- *prometheus.Desc) { c.desc.Describe(ch) }

func (c *nodeCollector) Collect(ch chan<- prometheus.Metric) {
	counts := c.t.Counts()
	for s, n := range counts {
		g := c.desc.WithLabelValues(State(s).String())
		g.Set(float64(n))
		g.Collect(ch)
	}
}
