package inventory

import (
	"runtime/metrics"
	"testing"
)

// TestLatencyOver: the quantile is taken over the samples since the earlier
// read only, and compared by the lower bound of its bucket.
func TestLatencyOver(t *testing.T) {
	// Buckets: [0, 1ms), [1ms, 2ms), [2ms, 10ms), [10ms, inf).
	h := &metrics.Float64Histogram{Buckets: []float64{0, 0.001, 0.002, 0.010, 1e9}}
	for _, tc := range []struct {
		name          string
		before, after []uint64
		want          bool
	}{
		{name: "no samples", before: []uint64{5, 5, 5, 5}, after: []uint64{5, 5, 5, 5}, want: false},
		{name: "quick", before: nil, after: []uint64{95, 4, 1, 0}, want: false},
		{name: "a tenth waits long", before: nil, after: []uint64{80, 5, 10, 5}, want: true},
		{name: "only the new samples count", before: []uint64{0, 0, 50, 50}, after: []uint64{100, 0, 50, 50}, want: false},
		{name: "new waits after quick history", before: []uint64{1000, 0, 0, 0}, after: []uint64{1000, 0, 3, 7}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.Counts = tc.after
			if got := latencyOver(h, tc.before, 0.9, 0.002); got != tc.want {
				t.Errorf("latencyOver = %v, want %v", got, tc.want)
			}
		})
	}
}
