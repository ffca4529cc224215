package inventory

import (
	"runtime/metrics"
	"sync"
	"time"
)

// The CPU probe behind the burst cap (DiscoveryConfig.Contended).
const (
	// cpuProbeEvery is how often the probe reads the scheduler's
	// latencies, and how often a walk the cap holds back asks again.
	cpuProbeEvery = 250 * time.Millisecond
	// cpuBusyLatency is the 90th percentile of the time runnable goroutines
	// waited for a processor above which HSM is short of CPU.
	cpuBusyLatency = 2 * time.Millisecond
)

// cpuProbe tells whether this process is short of CPU from the Go
// scheduler's latencies (how long runnable goroutines waited for a
// processor, /sched/latencies:seconds): when most of them run at once, the
// CPU is free, whatever else runs on the host. It reads them at most every
// cpuProbeEvery; in between, the last answer stands.
type cpuProbe struct {
	mu     sync.Mutex
	at     time.Time
	last   []uint64
	busy   bool
	sample []metrics.Sample
}

func newCPUProbe() *cpuProbe {
	return &cpuProbe{sample: []metrics.Sample{{Name: "/sched/latencies:seconds"}}}
}

// contended reports whether the 90th percentile of the scheduling latency
// since the last read is over cpuBusyLatency.
func (p *cpuProbe) contended() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.at) < cpuProbeEvery {
		return p.busy
	}
	p.at = now
	metrics.Read(p.sample)
	if p.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return false // not reported by this runtime: never hold walks back
	}
	h := p.sample[0].Value.Float64Histogram()
	p.busy = latencyOver(h, p.last, 0.9, cpuBusyLatency.Seconds())
	p.last = append(p.last[:0], h.Counts...)
	return p.busy
}

// latencyOver reports whether the q quantile of the samples h holds beyond
// before (the counts of an earlier read of the same histogram) is at or
// above limit seconds. No samples is not over.
func latencyOver(h *metrics.Float64Histogram, before []uint64, q, limit float64) bool {
	delta := make([]uint64, len(h.Counts))
	var n uint64
	for i, c := range h.Counts {
		if i < len(before) && before[i] <= c {
			c -= before[i]
		}
		delta[i] = c
		n += c
	}
	if n == 0 {
		return false
	}
	want := uint64(q * float64(n))
	var cum uint64
	for i, c := range delta {
		cum += c
		if cum > want {
			return h.Buckets[i] >= limit // the bucket's lower bound
		}
	}
	return false
}
