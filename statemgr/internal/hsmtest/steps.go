package hsmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// OpenAPI opens a store in a temporary directory and serves its API.
func OpenAPI(t testing.TB, now func() time.Time) (*core.Store, *httptest.Server) {
	t.Helper()
	return OpenAPIOn(t, testpeer.SQLite, now)
}

// AddComponents inserts components straight into the table, bypassing the
// components API, so these tests do not depend on it.
func AddComponents(t testing.TB, s *core.Store, ids ...string) {
	t.Helper()
	tx, err := s.DB.W.Begin()
	if err != nil {
		t.Fatal(err)
	}
	stmt, err := tx.Prepare(`INSERT INTO components (id, type, state, flag) VALUES (?, ?, 'Ready', 'OK')`)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := stmt.Exec(id, string(xname.TypeOf(id))); err != nil {
			t.Fatalf("insert component %s: %v", id, err)
		}
	}
	stmt.Close()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// Written behind the Store's back (fast for 100,000): reload its index.
	if err := s.LoadComponents(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// Step is one request in an ordered API scenario. Want, when set, is compared
// as JSON with the response body; Detail, when set, must appear in the problem detail.
type Step struct {
	Name, Method, Path, Body string
	Status                   int
	Want, Detail             string
}

// Do sends body to path under /hsm/v2 on srv and returns the status and
// body; an error answer must be problem+json.
func Do(t testing.TB, srv *httptest.Server, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+hsm.Base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode >= 400 && resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("%s %s: error with Content-Type %q, want application/problem+json", method, path, resp.Header.Get("Content-Type"))
	}
	return resp.StatusCode, b
}

// RunSteps runs steps in order, each as a subtest.
func RunSteps(t *testing.T, srv *httptest.Server, steps []Step) {
	t.Helper()
	for _, st := range steps {
		t.Run(st.Name, func(t *testing.T) {
			status, body := Do(t, srv, st.Method, st.Path, st.Body)
			if status != st.Status {
				t.Fatalf("%s %s: status %d, want %d; body %s", st.Method, st.Path, status, st.Status, body)
			}
			if st.Want != "" {
				JSONEqual(t, body, st.Want)
			}
			if st.Detail != "" {
				var p struct{ Detail string }
				if err := json.Unmarshal(body, &p); err != nil || !strings.Contains(p.Detail, st.Detail) {
					t.Errorf("problem detail %q does not mention %q (body %s)", p.Detail, st.Detail, body)
				}
			}
		})
	}
}

// JSONEqual fails the test unless got and want are the same JSON value.
func JSONEqual(t testing.TB, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("response is not JSON: %v: %s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want JSON %s: %v", want, err)
	}
	if d := cmp.Diff(w, g); d != "" {
		t.Errorf("body mismatch (-want +got):\n%s", d)
	}
}

// NodeIDs returns n distinct node xnames.
func NodeIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("x%dc%ds%db0n%d", 1000+i/512, i/64%8, i/2%32, i%2)
	}
	return ids
}
