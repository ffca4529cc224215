package dhcp

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	packets, replies, dropped                      *prometheus.CounterVec
	sendErrors, storeErrors, expired               prometheus.Counter
	published, publishErrors, hsmWrites, hsmErrors prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, h *Handler) *metrics {
	vec := func(name, help, label string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{label})
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	m := &metrics{
		packets:       vec("dhcp_packets_total", "DHCP packets received that parse, by message type.", "type"),
		replies:       vec("dhcp_replies_total", "DHCP replies sent, by message type.", "type"),
		dropped:       vec("dhcp_dropped_total", "DHCP packets dropped, by reason (malformed, unknown_type, no_subnet, exhausted, other_server, not_pxe, no_lease).", "reason"),
		sendErrors:    counter("dhcp_send_errors_total", "DHCP replies the socket refused."),
		storeErrors:   counter("dhcp_store_errors_total", "Failed lease commits (their replies were not sent)."),
		expired:       counter("dhcp_expired_total", "Leases, declines and offers ended by time that needed storing."),
		published:     counter("dhcp_events_published_total", "Lease events published on the bus."),
		publishErrors: counter("dhcp_publish_errors_total", "Failed publishes of lease events (retried)."),
		hsmWrites:     counter("dhcp_hsm_writes_total", "Unknown MACs written to HSM's EthernetInterfaces."),
		hsmErrors:     counter("dhcp_hsm_errors_total", "Failed rounds of HSM writes (retried)."),
	}
	if reg == nil {
		return m
	}
	leases := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "dhcp_leases", Help: "Addresses bound, offered or declined."},
		func() float64 { return float64(h.Len()) })
	reg.MustRegister(m.packets, m.replies, m.dropped, m.sendErrors, m.storeErrors, m.expired,
		m.published, m.publishErrors, m.hsmWrites, m.hsmErrors, leases)
	return m
}
