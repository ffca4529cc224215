package discovery

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Stages of one attempt to register a MAC, as reds_stage_seconds labels them.
const (
	StageQueued      = "queued"      // noticed (lease, HSM poll, retry) -> a worker takes it
	StageSwitch      = "switch"      // the switches' forwarding tables (SNMP walks, coalesced)
	StageSLS         = "sls"         // the SLS connector of the port
	StageCredentials = "credentials" // the BMC's own password set and checked
	StageHSM         = "hsm"         // EthernetInterface and RedfishEndpoint written to HSM
)

// Timing is how long one attempt spent in each stage; a stage it did not
// reach (or skipped, as a Mountain BMC skips switch and sls) is zero.
type Timing struct {
	Queued, Switch, SLS, Credentials, HSM time.Duration
}

// Total is the time from notice to the end of the last stage reached.
func (t Timing) Total() time.Duration { return t.Queued + t.Switch + t.SLS + t.Credentials + t.HSM }

// Outcome is what became of one MAC a worker processed (Config.Done).
type Outcome struct {
	MAC, Xname string
	// Err is why the MAC stays unknown. Nil means the BMC Xname is
	// registered, or that HSM places the MAC under Xname, a component
	// that is not a BMC (a node's NIC): dropped. A nil Err with no Xname
	// is a resumed registration no longer needed (the endpoint was
	// registered or removed meanwhile).
	Err    error
	Timing Timing
}

// clock times the stages of one attempt.
type clock struct {
	now  func() time.Time
	last time.Time
	t    Timing
}

func newClock(now func() time.Time, since time.Time) *clock {
	return &clock{now: now, last: since}
}

// lap ends the stage d points into and starts the next.
func (c *clock) lap(d *time.Duration) {
	n := c.now()
	*d += n.Sub(c.last) // a stage tried again (SLS re-read) adds up
	c.last = n
}

func newStageHistogram() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "reds_stage_seconds",
		Help:    "Time one attempt to register a MAC spent in each stage: queued (waiting for a worker), switch (SNMP forwarding tables), sls (connector lookup), credentials (BMC password set and checked), hsm (EthernetInterface and RedfishEndpoint written).",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}, []string{"stage"})
}

// observe records the stages t reached.
func (m *metrics) observe(t Timing) {
	for _, st := range []struct {
		name string
		d    time.Duration
	}{{StageQueued, t.Queued}, {StageSwitch, t.Switch}, {StageSLS, t.SLS}, {StageCredentials, t.Credentials}, {StageHSM, t.HSM}} {
		if st.d > 0 {
			m.stages.WithLabelValues(st.name).Observe(st.d.Seconds())
		}
	}
}
