package power

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the engine's own Prometheus metrics (the HTTP server adds
// its per-route ones).
type metrics struct {
	transitions *prometheus.CounterVec
	tasks       *prometheus.CounterVec
	taskTime    *prometheus.HistogramVec
	capTasks    *prometheus.CounterVec
	sampleTime  prometheus.Histogram
	lastSample  atomic.Int64 // unix nanoseconds of the last full sampling round; 0: none yet
}

func newMetrics(reg prometheus.Registerer, s *Service) *metrics {
	m := &metrics{
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pcs_transitions_total",
			Help: "Transitions ended, by operation and result (completed, aborted)."}, []string{"operation", "result"}),
		tasks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pcs_tasks_total",
			Help: "Transition tasks ended, by operation and status (succeeded, failed, unsupported)."}, []string{"operation", "status"}),
		taskTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "pcs_task_duration_seconds",
			Help:    "Time from a task starting (or resuming after a restart) to its end, by operation and status.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 16)}, []string{"operation", "status"}),
		capTasks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pcs_power_cap_tasks_total",
			Help: "Power-cap tasks completed, by type (snapshot, patch)."}, []string{"type"}),
		sampleTime: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pcs_power_status_sample_seconds",
			Help: "Time to read the power state of every component once.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 16)}),
	}
	if reg == nil {
		return m
	}
	age := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "pcs_power_status_cache_age_seconds",
		Help: "Seconds since the last full sampling round ended (-1 before the first)."}, func() float64 {
		at := m.lastSample.Load()
		if at == 0 {
			return -1
		}
		return s.cfg.Now().Sub(time.Unix(0, at)).Seconds()
	})
	size := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "pcs_power_status_components",
		Help: "Components in the power-status cache."}, func() float64 { return float64(s.cache.len()) })
	running := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "pcs_transitions_running",
		Help: "Transitions not yet ended."}, func() float64 { return float64(s.running()) })
	reg.MustRegister(m.transitions, m.tasks, m.taskTime, m.capTasks, m.sampleTime, age, size, running)
	return m
}

// running counts the transitions not yet ended.
func (s *Service) running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.runs {
		select {
		case <-r.done:
		default:
			n++
		}
	}
	return n
}

// bmcMetrics count the BMC client's requests and their failures.
type bmcMetrics struct {
	requests *prometheus.CounterVec
	errors   *prometheus.CounterVec
	latency  prometheus.Histogram
}

func newBMCMetrics(reg prometheus.Registerer) *bmcMetrics {
	m := &bmcMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pcs_bmc_requests_total",
			Help: "Redfish requests sent to BMCs, by method."}, []string{"method"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pcs_bmc_request_errors_total",
			Help: "Redfish requests that failed, by method and reason (timeout, connection, unauthorized, refused (other 4xx), status_5xx, canceled)."},
			[]string{"method", "reason"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pcs_bmc_request_seconds",
			Help: "Time of one Redfish request, waiting for a slot included.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.errors, m.latency)
	}
	return m
}

// errReason classifies a BMC request's failure for pcs_bmc_request_errors_total.
func errReason(ctx context.Context, err error, status int) string {
	var ne net.Error
	switch {
	case status == 401:
		return "unauthorized"
	case status >= 500:
		return "status_5xx"
	case status >= 300:
		return "refused"
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		if ctx.Err() != nil {
			return "canceled" // the task's own deadline or abort, not the BMC's
		}
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "connection"
}
