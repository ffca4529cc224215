package redfishsim

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
)

func TestFaultPaths(t *testing.T) {
	tests := []struct {
		name     string
		faults   Faults
		path     string
		user     string
		want     int
		wantJSON bool
	}{
		{name: "no fault", path: "/redfish/v1/Systems/Node0/EthernetInterfaces", user: testUser, want: 200, wantJSON: true},
		{name: "missing collection by wildcard", faults: Faults{MissingPaths: []string{"/redfish/v1/Systems/*/EthernetInterfaces"}},
			path: "/redfish/v1/Systems/Node0/EthernetInterfaces", user: testUser, want: 404, wantJSON: true},
		{name: "missing covers members", faults: Faults{MissingPaths: []string{"/redfish/v1/Systems/*/EthernetInterfaces"}},
			path: "/redfish/v1/Systems/Node0/EthernetInterfaces/eth0", user: testUser, want: 404, wantJSON: true},
		{name: "missing leaves siblings", faults: Faults{MissingPaths: []string{"/redfish/v1/Systems/*/EthernetInterfaces"}},
			path: "/redfish/v1/Systems/Node0/Processors", user: testUser, want: 200, wantJSON: true},
		{name: "missing still needs auth", faults: Faults{MissingPaths: []string{"/redfish/v1/Systems"}},
			path: "/redfish/v1/Systems", want: 401, wantJSON: true},
		{name: "garbage body", faults: Faults{GarbagePaths: []string{"/redfish/v1/Systems/Node0"}},
			path: "/redfish/v1/Systems/Node0", user: testUser, want: 200, wantJSON: false},
		{name: "garbage leaves parent", faults: Faults{GarbagePaths: []string{"/redfish/v1/Systems/Node0"}},
			path: "/redfish/v1/Systems", user: testUser, want: 200, wantJSON: true},
		{name: "500 for a path", faults: Faults{ErrorPaths: []string{"/redfish/v1/Managers"}},
			path: "/redfish/v1/Managers/BMC", user: testUser, want: 500, wantJSON: true},
		{name: "500 before auth", faults: Faults{ErrorPaths: []string{"/redfish/v1/Managers"}},
			path: "/redfish/v1/Managers", want: 500, wantJSON: true},
		{name: "500 for every request", faults: Faults{ErrorRate: 1},
			path: "/redfish/v1/", want: 500, wantJSON: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, srv := startBMC(t, Config{Xname: "x3000c0s1b0", Tree: Generate("x3000c0s1b0", 1)})
			if err := b.SetFaults(tt.faults); err != nil {
				t.Fatal(err)
			}
			rq := req{method: "GET", path: tt.path}
			if tt.user != "" {
				rq.user, rq.pass = testUser, testPass
			}
			resp, body := do(t, srv, rq)
			if resp.StatusCode != tt.want {
				t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, tt.want, body)
			}
			if got := json.Valid(body); got != tt.wantJSON {
				t.Errorf("body is JSON = %v, want %v: %q", got, tt.wantJSON, body)
			}
		})
	}
}

func TestFaultErrorRateIsAFraction(t *testing.T) {
	b, err := New(Config{Xname: "x3000c0s1b0", Tree: Generate("x3000c0s1b0", 1), Faults: Faults{ErrorRate: 0.25}, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	failed := 0
	for range n {
		rec := httptest.NewRecorder()
		b.ServeHTTP(rec, httptest.NewRequest("GET", "/redfish/v1/", nil))
		if rec.Code == http.StatusInternalServerError {
			failed++
		}
	}
	// 25% of 2000 is 500; a seeded PCG lands well inside ±100 (5 sigma is ±97).
	if failed < 400 || failed > 600 {
		t.Fatalf("%d of %d requests failed, want about 500", failed, n)
	}
}

func TestFaultValidation(t *testing.T) {
	tests := []struct {
		name   string
		faults Faults
	}{
		{name: "negative latency", faults: Faults{Latency: -time.Second}},
		{name: "rate above 1", faults: Faults{ErrorRate: 1.5}},
		{name: "relative path", faults: Faults{MissingPaths: []string{"Systems"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := New(Config{Tree: Generate("x3000c0s1b0", 1)})
			if err != nil {
				t.Fatal(err)
			}
			if err := b.SetFaults(tt.faults); err == nil {
				t.Fatal("SetFaults accepted invalid faults")
			}
			if _, err := New(Config{Tree: Generate("x3000c0s1b0", 1), Faults: tt.faults}); err == nil {
				t.Fatal("New accepted invalid faults")
			}
		})
	}
}

// TestFaultHang checks that a hung BMC answers nothing and lets go when the
// client's request context ends; synctest's clock makes the 30 s timeout instant.
func TestFaultHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := New(Config{Tree: Generate("x3000c0s1b0", 1), Faults: Faults{Hang: true}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		start := time.Now()
		rec := httptest.NewRecorder()
		b.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, "GET", "/redfish/v1/", nil))
		if got := time.Since(start); got != 30*time.Second {
			t.Errorf("handler returned after %v, want exactly the 30s client timeout", got)
		}
		if rec.Body.Len() != 0 || rec.Flushed {
			t.Errorf("a hung BMC wrote %q", rec.Body.String())
		}
	})
}

// TestFaultLatency checks the added latency, applied before a 401 too.
func TestFaultLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := New(Config{Tree: Generate("x3000c0s1b0", 1), Faults: Faults{Latency: 1500 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/redfish/v1/", "/redfish/v1/Systems"} {
			start := time.Now()
			rec := httptest.NewRecorder()
			b.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), "GET", path, nil))
			if got := time.Since(start); got != 1500*time.Millisecond {
				t.Errorf("%s answered after %v, want 1.5s", path, got)
			}
			if want := map[string]int{"/redfish/v1/": 200, "/redfish/v1/Systems": 401}[path]; rec.Code != want {
				t.Errorf("%s: status %d, want %d", path, rec.Code, want)
			}
		}
	})
}

func TestMatchPattern(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"/redfish/v1/Systems", "/redfish/v1/Systems", true},
		{"/redfish/v1/Systems", "/redfish/v1/Systems/1", true},
		{"/redfish/v1/Systems/", "/redfish/v1/Systems/1", true},
		{"/redfish/v1/Systems", "/redfish/v1/SystemsX", false},
		{"/redfish/v1/Systems", "/redfish/v1", false},
		{"/redfish/v1/*/EthernetInterfaces", "/redfish/v1/Managers/BMC/EthernetInterfaces", false},
		{"/redfish/v1/*/EthernetInterfaces", "/redfish/v1/Managers/EthernetInterfaces", true},
		{"/redfish/v1/*/*/EthernetInterfaces", "/redfish/v1/Managers/BMC/EthernetInterfaces/1", true},
		{"/", "/redfish/v1", true},
	}
	for _, tt := range tests {
		if got := matchPattern(tt.pattern, tt.path); got != tt.want {
			t.Errorf("matchPattern(%q, %q) = %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
}
