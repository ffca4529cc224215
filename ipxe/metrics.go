package ipxe

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/statemgr/client"
)

// metrics are BSS's own Prometheus metrics. Counters used on the boot-script
// path are resolved once, not per request.
type metrics struct {
	known, unknown, chain, notConfigured prometheus.Counter
	scns, scnBad                         prometheus.Counter
	resyncs, resyncErrors                prometheus.Counter
	lookups                              prometheus.Counter
	nodeTokens                           prometheus.Counter
	// restored counts SCN subscriptions HSM lost and was given again.
	restored prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, c *Cache) *metrics {
	scripts := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "bss_bootscripts_total",
		Help: "Boot scripts answered, by kind: known node, unknown node (Unknown-<arch>), chain back for the architecture, not configured (404).",
	}, []string{"kind"})
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	m := &metrics{
		known: scripts.WithLabelValues("known"), unknown: scripts.WithLabelValues("unknown"),
		chain: scripts.WithLabelValues("chain"), notConfigured: scripts.WithLabelValues("not_configured"),
		scns:         counter("bss_scns_total", "HSM state-change notifications applied to the cache."),
		scnBad:       counter("bss_scns_malformed_total", "HSM state-change notifications refused as malformed."),
		resyncs:      counter("bss_hsm_resyncs_total", "Full reads of HSM into the cache."),
		resyncErrors: counter("bss_hsm_errors_total", "Failed reads of HSM (full, per node or per MAC)."),
		lookups:      counter("bss_hsm_lookups_total", "Reads of HSM for nodes, MACs or IPs the cache missed."),
		nodeTokens:   counter("bss_node_tokens_total", "Node tokens minted (boot scripts, meta-data, renewals)."),
		restored:     client.NewRestoredCounter("bss", nil),
	}
	if reg == nil {
		return m
	}
	nodes := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "bss_hsm_cache_nodes", Help: "HSM nodes in BSS's cache.",
	}, func() float64 { return float64(c.Len()) })
	reg.MustRegister(scripts, m.scns, m.scnBad, m.resyncs, m.resyncErrors, m.lookups, m.nodeTokens, m.restored, nodes)
	return m
}
