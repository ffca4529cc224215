package httpclient

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
)

func TestDoDecodesAndClassifies(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/echo", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]string
		if err := httpserver.ReadJSON(w, r, 0, &in); err != nil {
			problem.Write(w, r, nil, err)
			return
		}
		if r.Header.Get("User-Agent") != "tester" {
			problem.WriteStatus(w, r, 400, "no user agent")
			return
		}
		httpserver.WriteJSON(w, 200, in)
	})
	mux.HandleFunc("GET /v1/missing", func(w http.ResponseWriter, r *http.Request) {
		problem.Write(w, r, nil, problem.NotFoundf("no such xname x1"))
	})
	mux.HandleFunc("GET /v1/plain", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream broke", http.StatusBadGateway)
	})
	mux.HandleFunc("PATCH /v1/empty", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := New("svc", srv.URL+"/", "/v1", nil)
	c.UserAgent = "tester"

	var out map[string]string
	if err := c.Do(t.Context(), "POST", "/echo", map[string]string{"a": "b"}, &out); err != nil || out["a"] != "b" {
		t.Fatalf("echo = %v, %v", out, err)
	}
	keep := map[string]string{"kept": "yes"}
	if err := c.Do(t.Context(), "PATCH", "/empty", nil, &keep); err != nil || keep["kept"] != "yes" {
		t.Fatalf("empty 200 answer: out = %v, err = %v; want out untouched and no error", keep, err)
	}
	tests := []struct {
		path     string
		kind     error
		contains string
	}{
		{path: "/missing", kind: problem.ErrNotFound, contains: "no such xname x1"},
		{path: "/plain", kind: problem.ErrUnavailable, contains: "upstream broke"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			err := c.Do(t.Context(), "GET", tt.path, nil, nil)
			if !errors.Is(err, tt.kind) || !strings.Contains(err.Error(), tt.contains) || !strings.HasPrefix(err.Error(), "svc GET "+tt.path) {
				t.Fatalf("err = %v, want kind %v containing %q", err, tt.kind, tt.contains)
			}
		})
	}
	if st := StatusCode(c.Do(t.Context(), "GET", "/plain", nil, nil)); st != http.StatusBadGateway {
		t.Errorf("StatusCode = %d, want 502", st)
	}
	srv.Close()
	err := c.Do(t.Context(), "GET", "/missing", nil, nil)
	if !errors.Is(err, problem.ErrUnavailable) {
		t.Fatalf("closed server: err = %v, want ErrUnavailable", err)
	}
	if st := StatusCode(err); st != 0 {
		t.Errorf("StatusCode of a transport failure = %d, want 0", st)
	}
}

func TestNewDaemon(t *testing.T) {
	for _, tc := range []struct {
		base, ua         string
		wantBase, wantUA string
	}{
		{base: "http://h:27779", wantBase: "http://h:27779/hsm/v2", wantUA: "hms"},
		{base: "http://h:27779/", ua: "hbtd", wantBase: "http://h:27779/hsm/v2", wantUA: "hbtd"},
		{base: "http://h:27779/hsm/v2", wantBase: "http://h:27779/hsm/v2", wantUA: "hms"},
		{base: "http://h:27779/hsm/v2//", wantBase: "http://h:27779/hsm/v2", wantUA: "hms"},
	} {
		c := NewDaemon("hsm", tc.base, "/hsm/v2", nil, tc.ua)
		if c.Base != tc.wantBase || c.UserAgent != tc.wantUA || c.Service != "hsm" {
			t.Errorf("NewDaemon(%q, %q): base %q, user agent %q; want %q, %q", tc.base, tc.ua, c.Base, c.UserAgent, tc.wantBase, tc.wantUA)
		}
	}
}
