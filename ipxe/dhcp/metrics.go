package dhcp

import (
	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	packets, replies, dropped                      *prometheus.CounterVec
	packetsBy, repliesBy                           [dhcpv4.MessageTypeInform + 1]prometheus.Counter // per message type, resolved once
	sendErrors, storeErrors, expired, commits      prometheus.Counter
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
		commits:       counter("dhcp_commits_total", "Group commits of lease changes (changes per commit: dhcp_replies_total{type=\"ACK\"} over this, in a storm)."),
		published:     counter("dhcp_events_published_total", "Lease events published on the bus."),
		publishErrors: counter("dhcp_publish_errors_total", "Failed publishes of lease events (retried)."),
		hsmWrites:     counter("dhcp_hsm_writes_total", "Unknown MACs written to HSM's EthernetInterfaces."),
		hsmErrors:     counter("dhcp_hsm_errors_total", "Failed rounds of HSM writes (retried)."),
	}
	// Resolved once (a label lookup per packet showed in profiles); zero
	// series for the types clients send and we answer, as Prometheus advises.
	for _, t := range []dhcpv4.MessageType{dhcpv4.MessageTypeDiscover, dhcpv4.MessageTypeRequest,
		dhcpv4.MessageTypeDecline, dhcpv4.MessageTypeRelease, dhcpv4.MessageTypeInform} {
		m.packetsBy[t] = m.packets.WithLabelValues(t.String())
	}
	for _, t := range []dhcpv4.MessageType{dhcpv4.MessageTypeOffer, dhcpv4.MessageTypeAck, dhcpv4.MessageTypeNak} {
		m.repliesBy[t] = m.replies.WithLabelValues(t.String())
	}
	if reg == nil {
		return m
	}
	leases := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "dhcp_leases", Help: "Addresses bound, offered or declined."},
		func() float64 { return float64(h.Len()) })
	reg.MustRegister(m.packets, m.replies, m.dropped, m.sendErrors, m.storeErrors, m.expired, m.commits,
		m.published, m.publishErrors, m.hsmWrites, m.hsmErrors, leases)
	return m
}

// packet is the counter of received packets of type t.
func (m *metrics) packet(t dhcpv4.MessageType) prometheus.Counter {
	if int(t) < len(m.packetsBy) && m.packetsBy[t] != nil {
		return m.packetsBy[t]
	}
	return m.packets.WithLabelValues(t.String())
}

// reply is the counter of sent replies of type t.
func (m *metrics) reply(t dhcpv4.MessageType) prometheus.Counter {
	if int(t) < len(m.repliesBy) && m.repliesBy[t] != nil {
		return m.repliesBy[t]
	}
	return m.replies.WithLabelValues(t.String())
}
