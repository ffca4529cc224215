package heartbeat

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/httpserver/routetest"
	"github.com/hmsuite/hms/internal/testpeer"
)

// newTestAPI returns a service that is not Run (no deadlines fire) and its handler.
func newTestAPI(t *testing.T) (*Service, http.Handler) {
	t.Helper()
	return newTestAPIOn(t, testpeer.SQLite)
}

// newTestAPIOn is newTestAPI on a new database of db.
func newTestAPIOn(t *testing.T, db testpeer.DB) (*Service, http.Handler) {
	t.Helper()
	svc, err := New(t.Context(), Options{
		DBPath: db(t), HSMURL: "http://127.0.0.1:1", Port: "28500",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	return svc, NewAPI(svc, nil).Handler()
}

func call(h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

const goodTS = "2026-11-21T12:00:00Z"

func TestBadInput(t *testing.T) {
	big := `{"Component":"x0c0s0b0n0","Status":"OK","TimeStamp":"` + goodTS + `","Pad":"` + strings.Repeat("a", MaxBeatBody) + `"}`
	tests := []struct {
		name, method, path, body string
		status                   int
		detail                   string
	}{
		{name: "no component", method: "POST", path: "/heartbeat", body: `{"Status":"OK","TimeStamp":"` + goodTS + `"}`, status: 400, detail: "field Component: required"},
		{name: "bad xname", method: "POST", path: "/heartbeat", body: `{"Component":"node7","Status":"OK","TimeStamp":"` + goodTS + `"}`, status: 400, detail: "field Component: \"node7\" is not a valid xname"},
		{name: "no status", method: "POST", path: "/heartbeat", body: `{"Component":"x0c0s0b0n0","TimeStamp":"` + goodTS + `"}`, status: 400, detail: "field Status: required"},
		{name: "no timestamp", method: "POST", path: "/heartbeat", body: `{"Component":"x0c0s0b0n0","Status":"OK"}`, status: 400, detail: "field TimeStamp: required"},
		{name: "bad timestamp", method: "POST", path: "/heartbeat", body: `{"Component":"x0c0s0b0n0","Status":"OK","TimeStamp":"yesterday"}`, status: 400, detail: "field TimeStamp: \"yesterday\" is not an ISO 8601 time stamp"},
		{name: "status not a string", method: "POST", path: "/heartbeat", body: `{"Component":"x0c0s0b0n0","Status":1,"TimeStamp":"` + goodTS + `"}`, status: 400, detail: "field Status: expected string, got JSON number"},
		{name: "NID a number", method: "POST", path: "/heartbeat", body: `{"Component":"x0c0s0b0n0","NID":17,"Status":"OK","TimeStamp":"` + goodTS + `"}`, status: 400, detail: "field NID: expected string, got JSON number"},
		{name: "NID an object", method: "POST", path: "/heartbeat", body: `{"Component":"x0c0s0b0n0","NID":{"a":1},"Status":"OK","TimeStamp":"` + goodTS + `"}`, status: 400, detail: "field NID: expected string, got JSON object"},
		{name: "Hostname a bool", method: "POST", path: "/heartbeat", body: `{"Component":"x0c0s0b0n0","Hostname":true,"Status":"OK","TimeStamp":"` + goodTS + `"}`, status: 400, detail: "field Hostname: expected string, got JSON bool"},
		{name: "duplicate key", method: "POST", path: "/heartbeat", body: `{"Component":"x0c0s0b0n0","Status":"OK","Component":"x0c0s0b0n1","TimeStamp":"` + goodTS + `"}`, status: 400, detail: `request body: duplicate key "Component"`},
		{name: "duplicate key in batch", method: "POST", path: "/heartbeats", body: `[{"Component":"x0c0s0b0n0","Status":"OK","TimeStamp":"` + goodTS + `","Status":"OK"}]`, status: 400, detail: `request body: duplicate key "Status"`},
		{name: "invalid UTF-8", method: "POST", path: "/heartbeat", body: "{\"Component\":\"x0c0s0b0n0\",\"Status\":\"\xff\",\"TimeStamp\":\"" + goodTS + "\"}", status: 400, detail: "request body: invalid UTF-8 at byte 36"},
		{name: "malformed", method: "POST", path: "/heartbeat", body: `{"Component":"x0c0s0b0n0",`, status: 400, detail: "request body: truncated JSON"},
		{name: "too large", method: "POST", path: "/heartbeat", body: big, status: 413, detail: "request body over 16384 bytes: request body too large"},
		{name: "bad path xname", method: "POST", path: "/heartbeat/x0c0s0b0nX", body: `{"Status":"OK","TimeStamp":"` + goodTS + `"}`, status: 400, detail: "path xname: \"x0c0s0b0nX\" is not a valid xname"},
		{name: "path form without status", method: "POST", path: "/heartbeat/x0c0s0b0n0", body: `{"TimeStamp":"` + goodTS + `"}`, status: 400, detail: "field Status: required"},
		{name: "batch with a bad one", method: "POST", path: "/heartbeats", body: `[{"Component":"x0c0s0b0n0","Status":"OK","TimeStamp":"` + goodTS + `"},{"Component":"x0c0s0b0q","Status":"OK","TimeStamp":"` + goodTS + `"}]`, status: 400, detail: "field [1].Component: \"x0c0s0b0q\" is not a valid xname"},
		{name: "batch not an array", method: "POST", path: "/heartbeats", body: `{"Component":"x0c0s0b0n0"}`, status: 400, detail: "field (top level): expected []heartbeat.wireBeat, got JSON object"},
		{name: "hbstates bad xname", method: "POST", path: "/hbstates", body: `{"XNames":["x0c0s0b0n0","bogus"]}`, status: 400, detail: "field XNames[1]: \"bogus\" is not a valid xname"},
		{name: "hbstate bad xname", method: "GET", path: "/hbstate/bogus", status: 400, detail: "path xname: \"bogus\" is not a valid xname"},
		{name: "params number", method: "PATCH", path: "/params", body: `{"Errtime":30}`, status: 400, detail: "field Errtime: expected a JSON string, got 30"},
		{name: "params not a number", method: "PATCH", path: "/params", body: `{"warntime":"soon"}`, status: 400, detail: "field Warntime: \"soon\": want a number of seconds more than 0 and at most 2592000"},
		{name: "params warn after err", method: "PATCH", path: "/params", body: `{"Warntime":"40"}`, status: 400, detail: "field Warntime: 40 must be less than Errtime 30"},
		{name: "params errtime overflows", method: "PATCH", path: "/params", body: `{"Errtime":"9223372037"}`, status: 400, detail: "field Errtime: \"9223372037\": want a number of seconds more than 0 and at most 2592000"},
		{name: "params errtime huge", method: "PATCH", path: "/params", body: `{"Warntime":"1e300","Errtime":"1e301"}`, status: 400, detail: "field Errtime: \"1e301\": want a number of seconds more than 0 and at most 2592000"},
		{name: "params sm_timeout overflows", method: "PATCH", path: "/params", body: `{"Sm_timeout":"18446744073709551615"}`, status: 400, detail: "field Sm_timeout: \"18446744073709551615\": want a number of seconds more than 0 and at most 2592000"},
		{name: "params interval nan", method: "PATCH", path: "/params", body: `{"Interval":"NaN"}`, status: 400, detail: "field Interval: \"NaN\": want a number of seconds more than 0 and at most 2592000"},
		{name: "params negative", method: "PATCH", path: "/params", body: `{"Warntime":"-5"}`, status: 400, detail: "field Warntime: \"-5\": want a number of seconds more than 0 and at most 2592000"},
		{name: "params unknown", method: "PATCH", path: "/params", body: `{"Colour":"blue"}`, status: 400, detail: "field Colour: unknown parameter"},
		{name: "params port", method: "PATCH", path: "/params", body: `{"Port":"9999"}`, status: 400, detail: "field Port: read-only"},
		{name: "params url", method: "PATCH", path: "/params", body: `{"Sm_url":"ftp://x"}`, status: 400, detail: "field Sm_url: \"ftp://x\": want an http:// or https:// URL"},
		{name: "params array", method: "PATCH", path: "/params", body: `[]`, status: 400, detail: "field (top level): expected map[string]json.RawMessage, got JSON array"},
	}
	svc, h := newTestAPI(t)
	before := svc.Params()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := call(h, tt.method, agent.BasePath+tt.path, tt.body)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d; body %s", w.Code, tt.status, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("content type %q, want problem+json", ct)
			}
			var d struct{ Detail string }
			if err := json.Unmarshal(w.Body.Bytes(), &d); err != nil {
				t.Fatal(err)
			}
			if d.Detail != tt.detail {
				t.Fatalf("detail %q, want %q", d.Detail, tt.detail)
			}
		})
	}
	if diff := cmp.Diff([4]int{}, svc.Tracker.Counts()); diff != "" {
		t.Fatalf("bad input changed tracked nodes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, svc.Params()); diff != "" {
		t.Fatalf("bad input changed params (-want +got):\n%s", diff)
	}
}

func TestBeatsAndStates(t *testing.T) { pg.EachDB(t, testBeatsAndStates) }

func testBeatsAndStates(t *testing.T, db testpeer.DB) {
	svc, h := newTestAPIOn(t, db)
	beats := []struct{ path, body string }{
		{"/heartbeat", `{"Component":"x0c0s0b0n0","Hostname":"nid000001","NID":"1","Status":"OK","TimeStamp":"` + goodTS + `"}`},
		{"/heartbeat", `{"component":"X0C0S1B0N0","status":"OK","timestamp":"2026-11-21 12:00:00"}`},
		{"/heartbeat", `{"Component":"x0c0s2b0n0","NID":"17","Hostname":null,"Status":"Kernel Oops","TimeStamp":"2018-07-06T12:34:56.012345-5Z"}`},
		{"/heartbeat", `{"Component":"x0c0s6b0n0","Status":"OK","TimeStamp":"` + goodTS + `","Extra":{"nested":[1,2]}}`},
		{"/heartbeat/x0c0s3b0n0", `{"Status":"OK","TimeStamp":"` + goodTS + `"}`},
		{"/heartbeats", `[{"Component":"x0c0s4b0n0","Status":"OK","TimeStamp":"` + goodTS + `"},{"Component":"x0c0s5b0n0","Status":"OK","TimeStamp":"` + goodTS + `"}]`},
		{"/heartbeats", `[]`},
	}
	for _, b := range beats {
		if w := call(h, "POST", agent.BasePath+b.path, b.body); w.Code != 200 {
			t.Fatalf("POST %s %s: status %d: %s", b.path, b.body, w.Code, w.Body)
		}
	}
	w := call(h, "POST", agent.BasePath+"/hbstates", `{"XNames":["x0c0s0b0n0","x0c0s1b0n0","x0c0s2b0n0","x0c0s3b0n0","x0c0s4b0n0","x0c0s5b0n0","x0c0s6b0n0","x9c0s0b0n0"]}`)
	var got agent.HBStatesResponse
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, w.Body)
	}
	want := agent.HBStatesResponse{HBStates: []agent.HBState{
		{XName: "x0c0s0b0n0", Heartbeating: true}, {XName: "x0c0s1b0n0", Heartbeating: true}, {XName: "x0c0s2b0n0", Heartbeating: true}, {XName: "x0c0s3b0n0", Heartbeating: true},
		{XName: "x0c0s4b0n0", Heartbeating: true}, {XName: "x0c0s5b0n0", Heartbeating: true}, {XName: "x0c0s6b0n0", Heartbeating: true}, {XName: "x9c0s0b0n0", Heartbeating: false},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("hbstates (-want +got):\n%s", diff)
	}
	w = call(h, "GET", agent.BasePath+"/hbstate/x0c0s3b0n0", "")
	if diff := cmp.Diff(`{"XName":"x0c0s3b0n0","Heartbeating":true}`, strings.TrimSpace(w.Body.String())); diff != "" {
		t.Fatalf("hbstate (-want +got):\n%s", diff)
	}
	if n := svc.Tracker.Counts()[Alive]; n != 7 {
		t.Fatalf("%d alive nodes, want 7", n)
	}
}

func TestParams(t *testing.T) { pg.EachDB(t, testParams) }

func testParams(t *testing.T, db testpeer.DB) {
	svc, h := newTestAPIOn(t, db)
	w := call(h, "GET", agent.BasePath+"/params", "")
	want := agent.Params{Debug: "0", Errtime: "30", Warntime: "10", Interval: "5", Nosm: "0", Port: "28500",
		Sm_retries: "3", Sm_timeout: "10", Sm_url: "http://127.0.0.1:1/hsm/v2", Use_telemetry: "0"}
	var got agent.Params
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("GET /params (-want +got):\n%s", diff)
	}
	w = call(h, "PATCH", agent.BasePath+"/params", `{"warntime":"20","Errtime":"60","Sm_url":"http://hsm.example:27779/hsm/v2","Port":"28500"}`)
	if w.Code != 200 {
		t.Fatalf("PATCH: %d %s", w.Code, w.Body)
	}
	want.Warntime, want.Errtime, want.Sm_url = "20", "60", "http://hsm.example:27779/hsm/v2"
	got = agent.Params{}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("PATCH answer (-want +got):\n%s", diff)
	}
	if warn, errt := svc.Tracker.Thresholds(); warn != 20*time.Second || errt != 60*time.Second {
		t.Fatalf("tracker thresholds %v/%v, want 20s/60s", warn, errt)
	}
	if u := svc.HSM.URL(); u != "http://hsm.example:27779" {
		t.Fatalf("HSM URL %q", u)
	}
}

func TestHealthRoutes(t *testing.T) {
	_, h := newTestAPI(t)
	for _, tt := range []struct {
		path   string
		status int
		body   string
	}{
		{"/health", 200, `{"KvStore":"SQLite OK","MsgBus":"Not in use","HsmStatus":"Not contacted yet"}`},
		{"/liveness", 204, ""},
		{"/readiness", 204, ""},
	} {
		w := call(h, "GET", agent.BasePath+tt.path, "")
		if w.Code != tt.status || strings.TrimSpace(w.Body.String()) != tt.body {
			t.Fatalf("GET %s: %d %q, want %d %q", tt.path, w.Code, w.Body, tt.status, tt.body)
		}
	}
}

// TestBadFloodDoesNotBlockGood sends bad heartbeats from many goroutines while
// good ones are sent: every good one is applied and every bad one refused.
func TestBadFloodDoesNotBlockGood(t *testing.T) {
	svc, h := newTestAPI(t)
	srv := httptest.NewServer(h)
	defer srv.Close()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	bad := make([]int, 4)
	for i := range bad {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := http.Post(srv.URL+agent.BasePath+"/heartbeat", "application/json", strings.NewReader(`{"Component":"nope","Status":"OK","TimeStamp":"x"}`))
				if err != nil {
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 400 {
					bad[i]++
				}
			}
		})
	}
	c := agent.NewClient(srv.URL, nil)
	for i := range 50 {
		hb := agent.Heartbeat{Component: "x1c0s0b0n" + strconv.Itoa(i), Status: "OK", TimeStamp: goodTS}
		if err := c.Beat(t.Context(), hb); err != nil {
			t.Fatalf("good beat %d refused during the flood: %v", i, err)
		}
	}
	close(stop)
	wg.Wait()
	if n := svc.Tracker.Counts()[Alive]; n != 50 {
		t.Fatalf("%d nodes alive, want 50", n)
	}
	total := 0
	for _, n := range bad {
		total += n
	}
	if total == 0 {
		t.Fatal("no bad request was refused; the flood did not run")
	}
}

// TestParamsSurviveRestart: what PATCH /params set is applied again when
// hbtd starts over the same database, on top of the flags; a stored set
// that no longer fits the new flags is left out, not half applied.
func TestParamsSurviveRestart(t *testing.T) { pg.EachDB(t, testParamsSurviveRestart) }

func testParamsSurviveRestart(t *testing.T, newdb testpeer.DB) {
	db := newdb(t)
	open := func(errt time.Duration) (*Service, http.Handler) {
		t.Helper()
		svc, err := New(t.Context(), Options{DBPath: db, HSMURL: "http://127.0.0.1:1", Port: "28500", Errtime: errt})
		if err != nil {
			t.Fatal(err)
		}
		return svc, NewAPI(svc, nil).Handler()
	}
	svc, h := open(0)
	if w := call(h, "PATCH", agent.BasePath+"/params", `{"Warntime":"25","nosm":"1"}`); w.Code != 200 {
		t.Fatalf("PATCH: %d %s", w.Code, w.Body)
	}
	svc.Close()

	svc, _ = open(0)
	p := svc.Params()
	if warn, _ := svc.Tracker.Thresholds(); p.Warntime != "25" || p.Nosm != "1" || p.Errtime != "30" || warn != 25*time.Second {
		t.Errorf("after restart: Warntime %s Nosm %s Errtime %s, tracker warn %v; want 25, 1, 30 (flag), 25s",
			p.Warntime, p.Nosm, p.Errtime, warn)
	}
	svc.Close()

	svc, _ = open(20 * time.Second) // -errtime 20 now: Warntime 25 cannot stay
	defer svc.Close()
	if p := svc.Params(); p.Warntime != "10" || p.Nosm != "0" || p.Errtime != "20" {
		t.Errorf("stored set that does not fit: Warntime %s Nosm %s Errtime %s, want the flags 10, 0, 20",
			p.Warntime, p.Nosm, p.Errtime)
	}
}

// TestParamsRefusedAreNotStored: a PATCH /params refused for an overflowing
// timer leaves nothing stored, so a restart does not bring it back.
func TestParamsRefusedAreNotStored(t *testing.T) { pg.EachDB(t, testParamsRefusedAreNotStored) }

func testParamsRefusedAreNotStored(t *testing.T, newdb testpeer.DB) {
	db := newdb(t)
	svc, err := New(t.Context(), Options{DBPath: db, HSMURL: "http://127.0.0.1:1", Port: "28500"})
	if err != nil {
		t.Fatal(err)
	}
	h := NewAPI(svc, nil).Handler()
	for _, body := range []string{`{"Errtime":"9223372037"}`, `{"Warntime":"1","Errtime":"99999999999"}`, `{"Sm_timeout":"1e19"}`} {
		if w := call(h, "PATCH", agent.BasePath+"/params", body); w.Code != 400 {
			t.Fatalf("PATCH %s: %d %s, want 400", body, w.Code, w.Body)
		}
	}
	stored, err := svc.Store.LoadParams(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 0 {
		t.Fatalf("refused PATCHes stored %v", stored)
	}
	if warn, errt := svc.Tracker.Thresholds(); warn != 10*time.Second || errt != 30*time.Second {
		t.Fatalf("thresholds %v/%v, want 10s/30s", warn, errt)
	}
	svc.Close()
}

// TestParamsHSMChangeLoggedAtWarn: changing where hbtd reports, or whether
// it does, is logged at WARN with the caller's address and without the
// password of the URL.
func TestParamsHSMChangeLoggedAtWarn(t *testing.T) {
	svc, _ := newTestAPI(t)
	var logs strings.Builder
	h := NewAPI(svc, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))).Handler()
	r := httptest.NewRequest("PATCH", agent.BasePath+"/params", strings.NewReader(`{"sm_url":"http://admin:s3cret@evil.example:1/hsm/v2"}`))
	r.RemoteAddr = "192.0.2.7:40000"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Fatalf("PATCH: %d %s", w.Code, w.Body)
	}
	if w := call(h, "PATCH", agent.BasePath+"/params", `{"Warntime":"5"}`); w.Code != 200 {
		t.Fatalf("PATCH: %d %s", w.Code, w.Body)
	}
	got := logs.String()
	for _, want := range []string{"level=WARN", "msg=params_hsm_changed", "remote=192.0.2.7:40000", "admin:xxxxx@evil.example"} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "s3cret") || strings.Count(got, "params_hsm_changed") != 1 {
		t.Errorf("want one WARN line, without the password:\n%s", got)
	}
	if p := svc.Params(); p.Sm_url != "http://admin:s3cret@evil.example:1/hsm/v2" {
		t.Errorf("GET /params Sm_url = %q, want what was stored", p.Sm_url)
	}
}

// TestOpenAPIDocument: the served document lists every route and no other.
func TestOpenAPIDocument(t *testing.T) {
	_, h := newTestAPI(t)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/hmi/v1/openapi.yaml", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/yaml" {
		t.Fatalf("GET /hmi/v1/openapi.yaml: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	routetest.Check(t, h.(*httpserver.Mux), rec.Body.Bytes())
}
