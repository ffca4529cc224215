package fuzz

import (
	"path/filepath"
	"testing"

	"github.com/hmsuite/hms/fanout"
)

// startHMNFD starts an hmnfd with neither HSM nor Kafka (SCNs come in only
// over POST /hmi/v1/scn) and returns it as a target.
func startHMNFD(f *testing.F) *target {
	f.Helper()
	d, err := fanout.StartDaemon(f.Context(), fanout.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(f.TempDir(), "hmnfd.db")})
	if err != nil {
		f.Fatal(err)
	}
	run(f, d)
	return &target{base: d.URL(), client: newClient(),
		dumps: []string{"/hmi/v1/subscriptions", "/hmi/v2/subscriptions", "/hmi/v1/params", "/hmi/v2/deadletters"}}
}

// FuzzHMNFDSubscriptions stores generated subscriber URLs; its daemon gets
// no SCN, so it never delivers to one.
func FuzzHMNFDSubscriptions(f *testing.F) {
	tg := startHMNFD(f)
	tg.mustDo(f, "POST", "/hmi/v1/subscribe", `{"Subscriber":"cray-bss@x0","States":["on","off"],"Enabled":true,"Url":"http://127.0.0.1:1/boot/v1/scn"}`, 200)
	v2 := "/hmi/v2/subscriptions/{}/agents/"
	routes := []route{
		{method: "POST", path: "/hmi/v1/subscribe"}, {method: "PATCH", path: "/hmi/v1/subscribe"}, {method: "DELETE", path: "/hmi/v1/subscribe"},
		{method: "POST", path: v2 + "handler"}, {method: "PATCH", path: v2 + "handler"}, {method: "DELETE", path: v2 + "handler"},
		{method: "DELETE", path: "/hmi/v2/subscriptions/{}/agents"},
		{method: "GET", path: "/hmi/v2/subscriptions/{}", readOnly: true}, {method: "GET", path: "/hmi/v1/subscriptions", readOnly: true},
	}
	seeds := []seed{
		{route: "POST /hmi/v1/subscribe", body: `{"Subscriber":"handler@x1c0s0b0n0","Components":["x1c0s0b0n1","x1c0s0b0n3"],"States":["Off"],"Url":"http://127.0.0.1:2/scn"}`},
		{route: "POST /hmi/v1/subscribe", body: `{"Subscriber":"agent@nodeX","States":["On"],"Url":"http://127.0.0.1:2/x"}`},
		{route: "POST /hmi/v1/subscribe", body: `{"Subscriber":"a@x0","Components":["all"],"States":["On"],"Url":"file:///etc/passwd"}`},
		{route: "POST /hmi/v1/subscribe", body: `{"Subscriber":"a@x0","Components":["all"],"States":["Sleeping"],"Url":"http://127.0.0.1:2/x"}`},
		{route: "POST /hmi/v1/subscribe", body: `{"Subscriber":"a@x0","States":"On","Url":"http://127.0.0.1:2/x"}`},
		{route: "POST /hmi/v1/subscribe", body: `{"Subscriber":"a@x0","States":["On"],"Url":"http://127.0.0.1:2/x","url":"http://127.0.0.1:3/x"}`},
		{route: "PATCH /hmi/v1/subscribe", body: `{"Subscriber":"cray-bss@x0","States":["on","off","ready"],"Url":"http://127.0.0.1:1/boot/v1/scn"}`},
		{route: "DELETE /hmi/v1/subscribe", body: `{"Subscriber":"cray-bss@x9","Url":"http://127.0.0.1:1/boot/v1/scn"}`},
		{route: "POST " + v2 + "handler", param: "x1c0s0b0n0", body: `{"Components":["allnodes"],"States":["Ready"],"SubRoles":["Worker"],"Url":"http://127.0.0.1:4/scn"}`},
		{route: "POST " + v2 + "handler", param: "x1c0s0b0n0", body: `{"States":["Off"],"Url":"http://127.0.0.1:4/scn"}`},
		{route: "POST " + v2 + "handler", param: "x1c0s0b0n0", body: `{"Components":[],"States":["On"],"Url":"http://127.0.0.1:4/x"}`},
		{route: "PATCH " + v2 + "handler", param: "x1c0s0b0n0", body: `{"Components":["all"],"States":["Off","Halt"]}`},
		{route: "DELETE " + v2 + "handler", param: "x9c0s0b0n0"},
		{route: "DELETE /hmi/v2/subscriptions/{}/agents", param: "x0"},
		{route: "GET /hmi/v2/subscriptions/{}", param: "x1c0s0b0n0"},
	}
	fuzzRoutes(f, tg, routes, withHostile(seeds, "x1c0s0b0n0", "POST /hmi/v1/subscribe", "POST "+v2+"handler", "PATCH "+v2+"handler"))
}

// FuzzHMNFDSCN feeds SCNs to an hmnfd without subscribers; a refused SCN
// must not count as received.
func FuzzHMNFDSCN(f *testing.F) {
	tg := startHMNFD(f)
	tg.dumps = append(tg.dumps, "/metrics|hmnfd_scns_received_total")
	routes := []route{{method: "POST", path: "/hmi/v1/scn"}, {method: "POST", path: "/hmi/v2/scn"}}
	var seeds []seed
	for _, b := range []string{
		`{"Components":["x1c0s0b0n0"],"State":"On","Seq":3,"Timestamp":"2026-01-02T03:04:05.123Z"}`,
		`{"Components":["x1c0s0b0n0","x1c0s0b0n1"],"Enabled":false,"Role":"Compute","SubRole":"Worker"}`,
		`{"Components":["x1c0s0b0n1","x1c0s0b0n2","X1C0S0B0N3"],"State":"Off","Flag":"OK"}`,
		`{"Components":[]}`, `{"Components":["bogus"]}`, `[]`, `{"Components":["x0"],"NID":5}{}`,
		`{"Components":["x1c0s0b0n0"],"State":"On","state":"Off"}`, `{"Components":["x1c0s0b0n0"],"State":"On","Seq":-1}`,
	} {
		seeds = append(seeds, seed{route: "POST /hmi/v1/scn", body: b}, seed{route: "POST /hmi/v2/scn", body: b})
	}
	fuzzRoutes(f, tg, routes, withHostile(seeds, "", "POST /hmi/v1/scn"))
}

func FuzzHMNFDParams(f *testing.F) {
	tg := startHMNFD(f)
	routes := []route{{method: "PATCH", path: "/hmi/v1/params"}, {method: "PATCH", path: "/hmi/v2/params"},
		{method: "GET", path: "/hmi/v1/params", readOnly: true}}
	var seeds []seed
	for _, b := range []string{`{"Scn_max_cache":0}`, `{"Scn_max_cache":50,"Debug":1}`, `{"Scn_backoff":3}`, `{"Scn_backoff":-3}`,
		`{"Port":1}`, `{"Scn_in_url":"http://x"}`, `{"Debug":1,"debug":2}`, `{"Bogus":1}`, `{"Scn_max_cache":1e20}`} {
		seeds = append(seeds, seed{route: "PATCH /hmi/v1/params", body: b})
	}
	fuzzRoutes(f, tg, routes, withHostile(seeds, "", "PATCH /hmi/v1/params"))
}
