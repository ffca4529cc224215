package heartbeat

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// recorder is a Sink that keeps every change it is given.
type recorder struct {
	mu      sync.Mutex
	changes []Change
}

func (r *recorder) Enqueue(cs ...Change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes = append(r.changes, cs...)
}

// take returns the changes so far as "xname:info" strings, sorted, and forgets them.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.changes))
	for _, c := range r.changes {
		out = append(out, c.XName+":"+c.Info())
	}
	r.changes = nil
	slices.Sort(out)
	return out
}

func (r *recorder) all() []Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.changes)
}

// bulkStateData is the body of PATCH /hsm/v2/State/Components/BulkStateData.
type bulkStateData struct {
	ComponentIDs []string `json:"ComponentIDs"`
	State        string   `json:"State"`
	Flag         string   `json:"Flag,omitempty"`
	ExtendedInfo struct {
		Message string `json:"Message,omitempty"`
	} `json:"ExtendedInfo"`
}

// fakeHSM records BulkStateData calls and can be switched down (503).
type fakeHSM struct {
	mu    sync.Mutex
	down  bool
	calls []bulkStateData
	fails int
}

func (f *fakeHSM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPatch || r.URL.Path != "/hsm/v2/State/Components/BulkStateData" {
		http.Error(w, "no such route", http.StatusNotFound)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		f.fails++
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	var b bulkStateData
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.calls = append(f.calls, b)
	w.WriteHeader(http.StatusNoContent)
}

func (f *fakeHSM) setDown(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = down
}

// takeCalls returns the calls so far, each as "State/Flag/Message: ids", sorted.
func (f *fakeHSM) takeCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.State+"/"+c.Flag+"/"+c.ExtendedInfo.Message+": "+strings.Join(c.ComponentIDs, ","))
	}
	f.calls = nil
	slices.Sort(out)
	return out
}

// handlerTransport serves requests with an in-process handler, so HTTP clients
// work inside a synctest bubble, where sockets would stop the fake clock.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// ts formats a heartbeat time stamp.
func ts(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// mustBeat records a beat or fails the test.
func mustBeat(t *testing.T, tr *Tracker, name string) {
	t.Helper()
	if err := tr.Beat(name, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// testutilCount reads the tracker's gap counter.
func testutilCount(t *testing.T, tr *Tracker) float64 {
	t.Helper()
	var m dto.Metric
	if err := tr.metrics.gaps.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
