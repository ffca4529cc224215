package discovery

import "github.com/prometheus/client_golang/prometheus"

// metrics are the daemon's own Prometheus metrics.
type metrics struct {
	leases     *prometheus.CounterVec
	registered *prometheus.CounterVec
	failures   *prometheus.CounterVec
	walks      *prometheus.CounterVec
	walkTime   prometheus.Histogram
	badEntries prometheus.Counter
	latency    prometheus.Histogram
	removed    prometheus.Counter
	missing    prometheus.Counter
	polls      *prometheus.CounterVec
	stages     *prometheus.HistogramVec
	// leasesSwept counts leases forgotten past their end, their expire
	// event missed.
	leasesSwept prometheus.Counter
	// restored counts endpoints registered again after HSM lost them.
	restored *prometheus.CounterVec
	// keyChanged counts attempts refused: the BMC presented another TLS
	// key than the one pinned.
	keyChanged prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, s *Service) *metrics {
	cv := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	m := &metrics{
		leases:     cv("reds_lease_events_total", "DHCP lease events read from the bus, by kind and action (queued; coalesced: merged into work queued, under way or done already, no new work; netboot: a node's NIC booting, left to HSM; ignored).", "kind", "action"),
		registered: cv("reds_registered_total", "BMCs registered in HSM, by kind (river, mountain).", "kind"),
		failures:   cv("reds_failures_total", "Failed attempts to place or register a MAC, by reason (as /v1/unknown shows it).", "reason"),
		walks:      cv("reds_snmp_walks_total", "SNMP walks of a switch's forwarding table, by result (ok, error).", "result"),
		walkTime: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "reds_snmp_walk_seconds",
			Help: "Time to walk one switch.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)}),
		badEntries: prometheus.NewCounter(prometheus.CounterOpts{Name: "reds_snmp_bad_entries_total",
			Help: "SNMP rows skipped as not a MAC, port or port name."}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "reds_lease_to_registered_seconds",
			Help: "Time from a lease (or HSM poll) noticing a MAC to its BMC registered in HSM.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 16)}),
		removed: prometheus.NewCounter(prometheus.CounterOpts{Name: "reds_removed_total",
			Help: "BMCs gone and no longer in SLS: RedfishEndpoint disabled, components marked Empty."}),
		missing: prometheus.NewCounter(prometheus.CounterOpts{Name: "reds_missing_total",
			Help: "BMCs gone but still in SLS: flagged Alert in HSM."}),
		polls:  cv("reds_polls_total", "Polls of HSM (EthernetInterfaces without ComponentID) and SLS, by target and result.", "target", "result"),
		stages: newStageHistogram(),
		leasesSwept: prometheus.NewCounter(prometheus.CounterOpts{Name: "reds_leases_swept_total",
			Help: "DHCP leases forgotten -lease-grace after their end with no expire event seen (missed while reds was down, or lost)."}),
		keyChanged: prometheus.NewCounter(prometheus.CounterOpts{Name: "reds_bmc_tls_key_changed_total",
			Help: "Attempts refused because the BMC presented a TLS key other than the one pinned at its registration (no credentials sent)."}),
		restored: cv("reds_endpoints_restored_total", "RedfishEndpoints reds registered that HSM lost (deleted, or HSM restarted empty), registered again by a presence round, by result (ok, error).", "result"),
	}
	if reg == nil {
		return m
	}
	unknown := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "reds_unknown_macs",
		Help: "MACs discovery could not place yet (GET /v1/unknown)."}, func() float64 { return float64(s.unknownCount(false)) })
	deferred := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "reds_deferred_macs",
		Help: "MACs on no switch within their grace, perhaps nodes' NICs HSM has yet to name (GET /v1/unknown?deferred=true)."},
		func() float64 { return float64(s.unknownCount(true)) })
	reg.MustRegister(m.leases, m.registered, m.failures, m.walks, m.walkTime, m.badEntries, m.latency,
		m.removed, m.missing, m.polls, m.stages, m.leasesSwept, m.restored, m.keyChanged, unknown, deferred)
	return m
}
