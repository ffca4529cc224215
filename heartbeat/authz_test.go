package heartbeat

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/authtest"
)

// TestAuthTable: the table names every route hbtd serves, and nothing else.
func TestAuthTable(t *testing.T) {
	_, h := newTestAPI(t)
	authtest.CheckTable(t, AuthTable(), h.(interface{ Patterns() []string }).Patterns())
}

// TestNodeTokenBeatsForItselfOnly: a node token's heartbeat for another
// node is refused and tracks nothing; its own is taken.
func TestNodeTokenBeatsForItselfOnly(t *testing.T) {
	is := authtest.New(t)
	svc, api := newTestAPI(t)
	h, err := is.Config().Wrap(api, AuthTable(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	node := is.Token("x1000c0s0b0n0", auth.Node)
	steps := []struct {
		path, body, token string
		want              int
	}{
		{path: "/hmi/v1/heartbeat", body: `{"Component":"x1000c0s0b0n1","Status":"OK","TimeStamp":"2026-11-24T12:00:00Z"}`, want: 401},
		{path: "/hmi/v1/heartbeat", body: `{"Component":"x1000c0s0b0n1","Status":"OK","TimeStamp":"2026-11-24T12:00:00Z"}`, token: node, want: 403},
		{path: "/hmi/v1/heartbeat/x1000c0s0b0n1", body: `{"Status":"OK","TimeStamp":"2026-11-24T12:00:00Z"}`, token: node, want: 403},
		{path: "/hmi/v1/heartbeats", body: `[]`, token: node, want: 403},
		// The same field twice, differing in case: the check must not read
		// one and the handler the other (found by review).
		{path: "/hmi/v1/heartbeat", body: `{"Component":"x1000c0s0b0n0","component":"x1000c0s0b0n1","Status":"OK","TimeStamp":"2026-11-24T12:00:00Z"}`, token: node, want: 403},
		{path: "/hmi/v1/heartbeat", body: `{"component":"x1000c0s0b0n1","Component":"x1000c0s0b0n0","Status":"OK","TimeStamp":"2026-11-24T12:00:00Z"}`, token: node, want: 403},
		{path: "/hmi/v1/heartbeat", body: `{"Component":"x1000c0s0b0n0","Status":"OK","TimeStamp":"2026-11-24T12:00:00Z"}`, token: node, want: 200},
	}
	for _, s := range steps {
		r := httptest.NewRequest("POST", s.path, strings.NewReader(s.body))
		if s.token != "" {
			r.Header.Set("Authorization", "Bearer "+s.token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != s.want {
			t.Errorf("POST %s %s: %d %s, want %d", s.path, s.body, w.Code, w.Body, s.want)
		}
	}
	if st := svc.Tracker.State("x1000c0s0b0n1"); st != Unknown {
		t.Errorf("refused node's state %v, want Unknown (nothing tracked)", st)
	}
	if st := svc.Tracker.State("x1000c0s0b0n0"); st == Unknown {
		t.Errorf("own heartbeat not tracked")
	}
	if w := call(h, "PATCH", "/hmi/v1/params", `{"Nosm":"1"}`); w.Code != http.StatusUnauthorized {
		t.Errorf("anonymous PATCH /params: %d, want 401", w.Code)
	}
}
