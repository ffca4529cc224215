package fanout

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/bus/bustest"
)

// arrivals is a fast subscriber endpoint: it counts SCNs and records when
// each POST arrived; with parse it also decodes the body to count batched SCNs
// and to measure from the SCN's Timestamp (of the first SCN of a batch).
type arrivals struct {
	n        atomic.Int64
	mu       sync.Mutex
	at       []time.Time
	parse    bool
	latency  []time.Duration
	wantDone int64
	done     chan struct{}
}

func (a *arrivals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	var lat time.Duration
	scns := int64(1)
	if a.parse {
		var d delivery
		_ = json.NewDecoder(r.Body).Decode(&d)
		lat = now.Sub(d.Timestamp)
		scns = int64(max(1, len(d.Seqs)))
	} else {
		_, _ = io.Copy(io.Discard, r.Body)
	}
	a.mu.Lock()
	a.at = append(a.at, now)
	if a.parse {
		a.latency = append(a.latency, lat)
	}
	a.mu.Unlock()
	if a.n.Add(scns) == a.wantDone && a.done != nil {
		close(a.done)
	}
	w.WriteHeader(http.StatusOK)
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func benchClient(maxConns int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = maxConns
	tr.MaxConnsPerHost = maxConns
	return &http.Client{Transport: tr}
}

// BenchmarkFanout10k: 10,000 subscribers (distinct URL paths on one fast
// receiver), one SCN that matches all of them. Each iteration is one SCN;
// reported: deliveries/s and the p50/p99 time from Enqueue to arrival.
func BenchmarkFanout10k(b *testing.B) {
	const subs = 10000
	rcv := &arrivals{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	svc, _ := openService(b, dbPath(b), Config{Client: benchClient(64), MaxInFlight: 64, MemQueue: 64})
	for i := range subs {
		mustSubscribe(b, svc, Key{Component: fmt.Sprintf("x%dc0s0b0n0", 1000+i/8), Agent: fmt.Sprint("a", i%8)},
			Subscription{Components: []string{"allnodes"}, States: []string{"Off"}, Url: fmt.Sprintf("%s/sub/%d", srv.URL, i)})
	}
	runService(b, svc)
	var lat []time.Duration
	var total time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		rcv.mu.Lock()
		rcv.at = rcv.at[:0]
		rcv.mu.Unlock()
		rcv.n.Store(0)
		rcv.wantDone, rcv.done = subs, make(chan struct{})
		start := time.Now()
		if _, err := svc.Enqueue(b.Context(), []SCN{stateSCN(int64(i+1), "x3000c0s0b0n0", "Off")}, "bench"); err != nil {
			b.Fatal(err)
		}
		<-rcv.done
		total += time.Since(start)
		rcv.mu.Lock()
		for _, at := range rcv.at {
			lat = append(lat, at.Sub(start))
		}
		rcv.mu.Unlock()
	}
	b.StopTimer()
	b.ReportMetric(float64(subs*b.N)/total.Seconds(), "deliveries/s")
	b.ReportMetric(float64(percentile(lat, 0.50).Milliseconds()), "p50-ms")
	b.ReportMetric(float64(percentile(lat, 0.99).Milliseconds()), "p99-ms")
}

// BenchmarkKafkaSustained publishes SCNs to kfake at a fixed rate for a fixed
// time while one hmnfd consumes them for 1,000 subscribers, each watching 10
// of 10,000 nodes (so each SCN goes to one subscriber). Run it with
// -benchtime=1x; it reports the SCN rate achieved, the highest consumer lag
// seen (published minus queued, sampled every 100 ms) and the p50/p99 time
// from the SCN's Timestamp to its arrival at the subscriber.
func BenchmarkKafkaSustained(b *testing.B) {
	const rate, nodes, subs, topic = 5000, 10000, 1000, "scn-bench"
	dur := 10 * time.Second
	if d, err := time.ParseDuration(os.Getenv("HMNFD_BENCH_DURATION")); err == nil {
		dur = d
	}
	brokers := bustest.Kafka(b)
	k, err := bus.NewKafka(bus.KafkaConfig{Brokers: brokers, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { k.Close() }) // after the consumer's cleanup has stopped it
	rcv := &arrivals{parse: true}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	svc, _ := openService(b, dbPath(b), Config{Client: benchClient(64), MaxInFlight: 64})
	node := func(i int) string { return fmt.Sprintf("x%dc0s%db0n%d", 1000+i/512, (i/8)%64, i%8) }
	for s := range subs {
		var comps []string
		for j := range 10 {
			comps = append(comps, node(s*10+j))
		}
		mustSubscribe(b, svc, Key{Component: node(s), Agent: "bench"},
			Subscription{Components: comps, States: []string{"On", "Off", "Ready"}, Url: fmt.Sprintf("%s/sub/%d", srv.URL, s)})
	}
	runService(b, svc)
	bustest.StartMember(b, k, topic, "hmnfd", svc.handleBatch)
	b.ResetTimer()
	for b.Loop() {
		published, maxLag := publishAtRate(b, k, topic, rate, dur, node, nodes, func() int64 {
			return int64(value(b, svc.m.received.WithLabelValues("bus")))
		})
		deadline := time.Now().Add(2 * time.Minute)
		for rcv.n.Load() < published {
			if time.Now().After(deadline) {
				b.Fatalf("delivered %d of %d (queued %v, malformed %v)", rcv.n.Load(), published,
					value(b, svc.m.received.WithLabelValues("bus")), value(b, svc.m.malformed))
			}
			<-time.After(10 * time.Millisecond)
		}
		b.ReportMetric(float64(published)/dur.Seconds(), "scns/s")
		b.ReportMetric(float64(maxLag), "max-lag-msgs")
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	b.ReportMetric(float64(percentile(rcv.latency, 0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(rcv.latency, 0.99).Microseconds())/1000, "p99-ms")
}

// publishAtRate publishes rate SCNs per second for dur in 10 ms ticks and
// samples the consumer lag; it returns how many it published and the worst lag.
func publishAtRate(b *testing.B, k bus.Publisher, topic string, rate int, dur time.Duration,
	node func(int) string, nodes int, queued func() int64) (int64, int64) {
	per := rate / 100
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var seq, maxLag int64
	end := time.Now().Add(dur)
	for time.Now().Before(end) {
		<-tick.C
		msgs := make([]bus.Message, per)
		for j := range msgs {
			seq++
			comp := node(int(seq) % nodes)
			v, _ := json.Marshal(SCN{Components: []string{comp}, State: []string{"On", "Off", "Ready"}[seq%3], Seq: seq, Timestamp: time.Now()})
			msgs[j] = bus.Message{Key: []byte(comp), Value: v}
		}
		if err := k.Publish(b.Context(), topic, msgs...); err != nil {
			b.Fatal(err)
		}
		if seq%int64(rate/10) == 0 {
			maxLag = max(maxLag, seq-queued())
		}
	}
	return seq, maxLag
}
