package fanout

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// pg is the package's PostgreSQL server, started by the first test that
// asks for a database on it (pg.EachDB).
var pg = testpeer.NewPostgres()

func TestMain(m *testing.M) { pg.Main(m) }

// quietLog discards info and debug lines so test output stays readable.
func quietLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// openService opens a Service on the database at path (a SQLite file or a
// PostgreSQL URL); the store is closed when the test ends.
func openService(t testing.TB, path string, cfg Config) (*Service, *Store) {
	t.Helper()
	store, err := OpenStore(context.WithoutCancel(t.Context()), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc, err := New(t.Context(), store, cfg, quietLog(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return svc, store
}

// dbPath is a SQLite file for the tests that run on SQLite only (inside a
// synctest bubble, or with many databases).
func dbPath(t testing.TB) string { return filepath.Join(t.TempDir(), "hmnfd.db") }

// runService runs svc.Run until the returned stop is called (or the test ends).
func runService(t testing.TB, svc *Service) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan struct{})
	go func() { defer close(done); _ = svc.Run(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// receiver is a set of subscribers behind one http.Handler, told apart by
// URL path. It is also an http.RoundTripper that serves requests in memory, so
// tests under testing/synctest stay inside the bubble. A path can be made to
// refuse connections, answer an error status, or hang until the request is
// cancelled.
type receiver struct {
	mu     sync.Mutex
	got    map[string][]delivery
	down   map[string]bool
	status map[string]int
	hang   map[string]bool
	// maxComps, when set for a path, refuses with 413 a body of more components.
	maxComps map[string]int
	onPost   func(path string, d delivery) // called after recording, without the lock
}

func newReceiver() *receiver {
	return &receiver{got: map[string][]delivery{}, down: map[string]bool{}, status: map[string]int{}, hang: map[string]bool{},
		maxComps: map[string]int{}}
}

func (rc *receiver) set(fn func()) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	fn()
}

func (rc *receiver) RoundTrip(r *http.Request) (*http.Response, error) {
	rc.mu.Lock()
	down := rc.down[r.URL.Path]
	rc.mu.Unlock()
	if down {
		return nil, errors.New("dial tcp: connection refused")
	}
	rec := httptest.NewRecorder()
	rc.ServeHTTP(rec, r)
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	return rec.Result(), nil
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	hang, status := rc.hang[r.URL.Path], rc.status[r.URL.Path]
	rc.mu.Unlock()
	if hang {
		<-r.Context().Done()
		return
	}
	if status != 0 {
		w.WriteHeader(status)
		return
	}
	var d delivery
	if err := json.NewDecoder(r.Body).Decode(&d); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	if limit := rc.maxComps[r.URL.Path]; limit > 0 && len(d.Components) > limit {
		rc.mu.Unlock()
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	}
	rc.got[r.URL.Path] = append(rc.got[r.URL.Path], d)
	on := rc.onPost
	rc.mu.Unlock()
	if on != nil {
		on(r.URL.Path, d)
	}
	w.WriteHeader(http.StatusOK)
}

// deliveries returns what path received so far.
func (rc *receiver) deliveries(path string) []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got[path]...)
}

// seqs flattens deliveries to the sequence numbers they carry, in order.
func seqs(ds []delivery) []int64 {
	var out []int64
	for _, d := range ds {
		if len(d.Seqs) > 0 {
			out = append(out, d.Seqs...)
		} else {
			out = append(out, d.Seq)
		}
	}
	return out
}

func boolp(b bool) *bool { return &b }

// stateSCN is an SCN setting component to state, as HSM puts it on the bus.
func stateSCN(seq int64, comp, state string) hsm.SCN {
	return hsm.SCN{Components: []string{comp}, State: state, Seq: seq,
		Timestamp: time.Unix(0, 0).Add(time.Duration(seq) * time.Millisecond).UTC()}
}

func mustSubscribe(t testing.TB, svc *Service, k Key, sub Subscription) {
	t.Helper()
	if err := svc.Subscribe(t.Context(), k, sub); err != nil {
		t.Fatalf("subscribe %s: %v", k, err)
	}
}

// value reads a counter or gauge.
func value(t testing.TB, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	switch {
	case d.Counter != nil:
		return d.Counter.GetValue()
	case d.Gauge != nil:
		return d.Gauge.GetValue()
	}
	t.Fatalf("metric %v is neither counter nor gauge", m.Desc())
	return 0
}
