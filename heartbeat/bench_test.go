package heartbeat

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hmsuite/hms/heartbeat/agent"
)

// benchNames returns n distinct node xnames.
func benchNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("x%dc%ds%db0n%d", 1000+i/2048, i/256%8, i/4%64, i%4)
	}
	return out
}

// batchBodies renders names as JSON batches of size each.
func batchBodies(names []string, size int) [][]byte {
	var out [][]byte
	for chunk := range slices.Chunk(names, size) {
		var b bytes.Buffer
		b.WriteByte('[')
		for i, n := range chunk {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"Component":%q,"Hostname":"nid%06d","NID":"%d","Status":"OK","TimeStamp":"2026-11-21T12:00:00.123456Z"}`, n, i, i)
		}
		b.WriteByte(']')
		out = append(out, b.Bytes())
	}
	return out
}

func benchService(b *testing.B) (*Service, http.Handler) {
	b.Helper()
	svc, err := New(b.Context(), Options{
		DBPath: filepath.Join(b.TempDir(), "hb.db"), HSMURL: "http://127.0.0.1:1",
		Warntime: time.Hour, Errtime: 2 * time.Hour, Port: "28500",
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close() })
	return svc, NewAPI(svc, nil).Handler()
}

type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *nopWriter) WriteHeader(int)             {}

// BenchmarkBatchHandler drives POST /heartbeats in batches of 1,000 over
// 100,000 tracked nodes, through the handler (no sockets).
func BenchmarkBatchHandler(b *testing.B) {
	_, h := benchService(b)
	bodies := batchBodies(benchNames(100_000), 1000)
	for _, body := range bodies { // every node tracked before timing
		h.ServeHTTP(&nopWriter{h: http.Header{}}, httptest.NewRequest("POST", agent.BasePath+"/heartbeats", bytes.NewReader(body)))
	}
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := &nopWriter{h: http.Header{}}
		rd := bytes.NewReader(nil)
		req := httptest.NewRequest("POST", agent.BasePath+"/heartbeats", rd)
		for pb.Next() {
			rd.Reset(bodies[next.Add(1)%int64(len(bodies))])
			req.Body = http.NoBody
			req.Body = readCloser{rd}
			h.ServeHTTP(w, req)
		}
	})
	b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "heartbeats/s")
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// BenchmarkSingleHandler drives POST /heartbeat over 10,000 distinct nodes
// with 100,000 tracked, through the handler (no sockets).
func BenchmarkSingleHandler(b *testing.B) {
	_, h := benchService(b)
	names := benchNames(100_000)
	for _, body := range batchBodies(names, 1000) {
		h.ServeHTTP(&nopWriter{h: http.Header{}}, httptest.NewRequest("POST", agent.BasePath+"/heartbeats", bytes.NewReader(body)))
	}
	bodies := make([][]byte, 10_000)
	for i := range bodies {
		bodies[i] = fmt.Appendf(nil, `{"Component":%q,"Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"}`, names[i])
	}
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := &nopWriter{h: http.Header{}}
		rd := bytes.NewReader(nil)
		req := httptest.NewRequest("POST", agent.BasePath+"/heartbeat", rd)
		for pb.Next() {
			rd.Reset(bodies[next.Add(1)%int64(len(bodies))])
			req.Body = readCloser{rd}
			h.ServeHTTP(w, req)
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "heartbeats/s")
}

// BenchmarkMemoryPerNode tracks 1,000,000 nodes and reports the heap they use,
// index, records and wheel entries included.
func BenchmarkMemoryPerNode(b *testing.B) {
	const n = 1_000_000
	names := benchNames(n)
	bs := make([]beat, n)
	for i, name := range names {
		bs[i] = beat{name: name, sent: 1}
	}
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		tr := NewTracker(Config{Warntime: 10 * time.Second, Errtime: 30 * time.Second})
		for chunk := range slices.Chunk(bs, 1000) {
			tr.beats(chunk)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if tr.Counts()[Alive] != n {
			b.Fatalf("tracked %d nodes", tr.Counts()[Alive])
		}
		// The names themselves are counted: the tracker clones what it keeps.
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "bytes/node")
		runtime.KeepAlive(tr)
	}
}

// BenchmarkDetectionLatency runs 100,000 nodes beating about once a second on
// the real clock (Errtime 5 s) and silences one node every 200 ms; it reports
// how long after its Errtime each silent node was declared dead, and how many
// nodes were declared dead that were not silent (must be 0).
func BenchmarkDetectionLatency(b *testing.B) {
	const (
		nodes  = 100_000
		silent = 40
		errt   = 5 * time.Second
	)
	for b.Loop() {
		lat := detectionRun(b, nodes, silent, errt)
		slices.Sort(lat)
		pct := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
		b.ReportMetric(float64(pct(0.5).Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(pct(0.99).Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
		b.Logf("detection latency after Errtime, %d silent nodes among %d: min %v p50 %v p90 %v p99 %v max %v",
			len(lat), nodes, lat[0], pct(0.5), pct(0.9), pct(0.99), lat[len(lat)-1])
	}
}

// deadSink records when each node was declared dead, on the real clock.
type deadSink struct {
	mu   sync.Mutex
	dead map[string]time.Time
}

func (s *deadSink) Enqueue(cs ...Change) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cs {
		if c.To == Dead {
			s.dead[c.XName] = now
		}
	}
}

func detectionRun(b *testing.B, nodes, silent int, errt time.Duration) []time.Duration {
	sink := &deadSink{dead: map[string]time.Time{}}
	tr := NewTracker(Config{Warntime: errt * 4 / 5, Errtime: errt}, sink)
	go tr.Run(b.Context())
	chunks := slices.Collect(slices.Chunk(benchNames(nodes), 1000))
	lastBeat := make([]time.Time, silent) // nodes 0..silent-1 go quiet one every 200 ms
	bs := make([]beat, 0, 1000)
	start := time.Now()
	for time.Since(start) < time.Duration(silent)*200*time.Millisecond+errt+time.Second {
		for ci, chunk := range chunks { // every node once a round, spread over the round
			quiet := min(silent, int(time.Since(start)/(200*time.Millisecond)))
			bs = bs[:0]
			for k, n := range chunk {
				if ci*1000+k >= quiet {
					bs = append(bs, beat{name: n, sent: 1})
				}
			}
			now := time.Now()
			tr.beats(bs)
			for i := max(quiet, ci*1000); i < min(silent, ci*1000+len(chunk)); i++ {
				lastBeat[i] = now
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	var lat []time.Duration
	for i := range silent {
		at, ok := sink.dead[chunks[0][i]]
		if !ok {
			b.Fatalf("%s never declared dead", chunks[0][i])
		}
		lat = append(lat, at.Sub(lastBeat[i].Add(errt)))
	}
	b.ReportMetric(float64(len(sink.dead)-silent), "false-deaths")
	return lat
}
