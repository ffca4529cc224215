package fuzz

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/hmsuite/hms/heartbeat"
)

const hbBase = "/hmi/v1"

// hbWatched are the nodes whose heartbeat state every hbtd dump shows; the
// xnames a request names are added to its own dumps.
var hbWatched = []string{"x0c0s0b0n0", "x1c0s0b0n0", "x3000c0s1b0n0"}

// startHBTD starts an hbtd whose timers do not fire within a fuzz run (a
// node's state changes only by a request) and whose HSM is a stub on
// loopback, and returns it as a target.
func startHBTD(f *testing.F) *target {
	f.Helper()
	hsm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	f.Cleanup(hsm.Close)
	d, err := heartbeat.StartDaemon(f.Context(), "127.0.0.1:0", heartbeat.Options{DBPath: filepath.Join(f.TempDir(), "hbtd.db"),
		HSMURL: hsm.URL, HTTPClient: loopbackOnly(), Warntime: 10 * time.Hour, Errtime: 20 * time.Hour, Interval: 5 * time.Second})
	if err != nil {
		f.Fatal(err)
	}
	run(f, d)
	tg := &target{base: d.URL(), client: newClient(), dumps: []string{hbBase + "/params"}}
	for _, x := range hbWatched {
		tg.dumps = append(tg.dumps, hbBase+"/hbstate/"+x)
	}
	tg.watch = func(param string, body []byte) []string {
		var out []string
		for _, x := range xnamesIn(param, body) {
			out = append(out, hbBase+"/hbstate/"+x)
		}
		return out
	}
	return tg
}

func FuzzHBTDHeartbeats(f *testing.F) {
	tg := startHBTD(f)
	routes := []route{
		{method: "POST", path: hbBase + "/heartbeat"}, {method: "POST", path: hbBase + "/heartbeat/{}"},
		{method: "POST", path: hbBase + "/heartbeats"},
		{method: "POST", path: hbBase + "/hbstates", readOnly: true}, {method: "GET", path: hbBase + "/hbstate/{}", readOnly: true},
	}
	beat := `{"Component":"x0c0s0b0n0","Hostname":"h","NID":"1","Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"}`
	seeds := []seed{
		{route: "POST " + hbBase + "/heartbeat", body: beat},
		{route: "POST " + hbBase + "/heartbeat", body: `{"component":"X01C0S0B0N0","status":"OK","timestamp":"2026-11-21 12:00:00","NID":5}`},
		{route: "POST " + hbBase + "/heartbeat", body: `{"Component":"x0c0s0b0n0","Component":"x1c0s0b0n0","Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"}`},
		{route: "POST " + hbBase + "/heartbeat", body: `{"Component":"x3000c0s1b0n0","component":"x1c0s0b0n0","Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"}`},
		{route: "POST " + hbBase + "/heartbeat", body: `{"Component":"x1c0s0b0n0","NID":{"a":1},"Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"}`},
		{route: "POST " + hbBase + "/heartbeat", body: `{"Component":"x1c0s0b0n0","Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"} {}`},
		{route: "POST " + hbBase + "/heartbeat", body: `{"Component":"x1c0s0b0n0","Status":"O` + "\x01" + `K","TimeStamp":"2026-11-21T12:00:00Z"}`},
		{route: "POST " + hbBase + "/heartbeat", body: `{"Component":null,"Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"}`},
		{route: "POST " + hbBase + "/heartbeat", body: `{"Component":"x1c0s0b0n0","Status":"OK","TimeStamp":"2026-11-21T12:00:00Z","NID":-0.5e3}`},
		{route: "POST " + hbBase + "/heartbeat/{}", param: "x3000c0s1b0n0", body: `{"Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"}`},
		{route: "POST " + hbBase + "/heartbeat/{}", param: "x1c0s0b0n0", body: `{"Component":"x3000c0s1b0n0","Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"}`},
		{route: "POST " + hbBase + "/heartbeats", body: `[` + beat + `,{"Component":"x0c0s0b0n1","Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"}]`},
		{route: "POST " + hbBase + "/heartbeats", body: `[{"Component":"x1c0s0b0n0","Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"},{"Component":"bogus"}]`},
		{route: "POST " + hbBase + "/heartbeats", body: `[{"Component":"x1c0s0b0n0"},]`},
		{route: "POST " + hbBase + "/hbstates", body: `{"XNames":["x0c0s0b0n0","x1c0s0b0n0"]}`},
		{route: "POST " + hbBase + "/hbstates", body: `{"XNames":["x0c0s0b0n0","nope"]}`},
		{route: "GET " + hbBase + "/hbstate/{}", param: "x0c0s0b0n0"},
	}
	fuzzRoutes(f, tg, routes, withHostile(seeds, "x1c0s0b0n0", "POST "+hbBase+"/heartbeat", "POST "+hbBase+"/heartbeats"))
}

// FuzzHBTDParams changes where hbtd reports (Sm_url); its daemon gets no
// heartbeats, so it has nothing to report, and its client dials loopback only.
func FuzzHBTDParams(f *testing.F) {
	tg := startHBTD(f)
	routes := []route{{method: "PATCH", path: hbBase + "/params"}, {method: "GET", path: hbBase + "/params", readOnly: true}}
	var seeds []seed
	for _, b := range []string{`{"Errtime":"9223372037"}`, `{"Errtime":30}`, `{"Sm_url":"ftp://x"}`, `{"Warntime":"-5"}`,
		`{"Warntime":"1","Errtime":"99999999999"}`, `{"Warntime":"1e300","Errtime":"1e301"}`, `{"Warntime":"25","nosm":"1"}`,
		`{"Warntime":"40"}`, `{"Warntime":"5"}`, `{"Warntime":"5","Warntime":"6"}`, `{"Warntime":"5","warntime":"6"}`,
		`{"Sm_url":"http://127.0.0.1:1/hsm/v2","Nosm":"0"}`, `{"Debug":"1","Interval":"NaN"}`, `{"Sm_timeout":"0"}`,
		`{"Sm_retries":"-1","Port":"1"}`} {
		seeds = append(seeds, seed{route: "PATCH " + hbBase + "/params", body: b})
	}
	fuzzRoutes(f, tg, routes, withHostile(seeds, "", "PATCH "+hbBase+"/params"))
}
