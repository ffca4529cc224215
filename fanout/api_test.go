package fanout

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/httpserver/routetest"
	"github.com/hmsuite/hms/internal/testpeer"
)

// apiServer serves the API over a fresh store; it returns the base URL and the service.
func apiServer(t *testing.T, path string) (string, *Service) {
	t.Helper()
	svc, _ := openService(t, path, Config{Client: &http.Client{Transport: newReceiver()}})
	srv := httptest.NewServer(NewAPI(svc, quietLog(), Params{Port: 28600}, nil).Handler())
	t.Cleanup(srv.Close)
	return srv.URL, svc
}

type call struct {
	method, path, body string
	status             int
	contains           string // in the response body
}

func do(t *testing.T, base string, c call) string {
	t.Helper()
	return doWith(t, http.DefaultClient, base, c)
}

// doWith is do through hc (an in-process transport under synctest).
func doWith(t *testing.T, hc *http.Client, base string, c call) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), c.method, base+c.path, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != c.status {
		t.Errorf("%s %s = %d %s, want %d", c.method, c.path, resp.StatusCode, b, c.status)
	}
	if resp.StatusCode >= 400 && resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("%s %s: error content type %q", c.method, c.path, resp.Header.Get("Content-Type"))
	}
	if !strings.Contains(string(b), c.contains) {
		t.Errorf("%s %s body %s, want it to contain %q", c.method, c.path, b, c.contains)
	}
	return string(b)
}

func TestAPISubscriptionLifecycle(t *testing.T) { pg.EachDB(t, testAPISubscriptionLifecycle) }

func testAPISubscriptionLifecycle(t *testing.T, db testpeer.DB) {
	path := db(t)
	base, svc := apiServer(t, path)
	steps := []call{
		{method: "POST", path: "/hmi/v1/subscribe", body: `{"Subscriber":"cray-bss@x0","States":["on","off"],"Enabled":true,"Url":"http://cray-bss/boot/v1/scn"}`, status: 200},
		{method: "PATCH", path: "/hmi/v1/subscribe", body: `{"Subscriber":"cray-bss@x0","States":["on","off"],"Url":"http://cray-bss/boot/v1/scn"}`, status: 200},
		{method: "POST", path: "/hmi/v2/subscriptions/x1c0s0b0n0/agents/handler", body: `{"Components":["allnodes"],"States":["Ready"],"SubRoles":["Worker"],"Url":"https://n0:8080/scn"}`, status: 200},
		{method: "POST", path: "/hmi/v2/subscriptions/x1c0s0b0n0/agents/handler", body: `{"Components":["allnodes"],"States":["Ready"],"SubRoles":["Worker"],"Url":"https://n0:8080/scn"}`, status: 200},
		{method: "POST", path: "/hmi/v2/subscriptions/x1c0s0b0n0/agents/handler", body: `{"Components":["all"],"States":["Off"],"Url":"https://n0:8080/scn"}`, status: 400, contains: "Subscription exists, cannot modify in POST operation"},
		{method: "PATCH", path: "/hmi/v2/subscriptions/x1c0s0b0n0/agents/handler", body: `{"States":["Off","Halt"]}`, status: 204},
		{method: "GET", path: "/hmi/v2/subscriptions/x1c0s0b0n0", status: 200, contains: `"SubscriberAgent":"handler"`},
		// Shipped hmnfd: "ok, or no match" (204), and nothing is created.
		{method: "PATCH", path: "/hmi/v2/subscriptions/x1c0s0b0n9/agents/handler", body: `{"States":["Off"]}`, status: 204},
		{method: "PATCH", path: "/hmi/v1/subscribe", body: `{"Subscriber":"x1c0s0b0n9","Components":["x1"],"States":["Off"],"Url":"http://n9/scn"}`, status: 200},
	}
	for _, c := range steps {
		do(t, base, c)
	}
	want := SubscriptionList{SubscriptionList: []Subscription{
		{Subscriber: "cray-bss@x0", SubscriberComponent: "x0", SubscriberAgent: "cray-bss", Enabled: boolp(true),
			States: []string{"Off", "On"}, Url: "http://cray-bss/boot/v1/scn"},
		{Subscriber: "handler@x1c0s0b0n0", SubscriberComponent: "x1c0s0b0n0", SubscriberAgent: "handler",
			Components: []string{"allnodes"}, SubRoles: []string{"Worker"}, States: []string{"Halt", "Off"}, Url: "https://n0:8080/scn"},
	}}
	check := func(base string) {
		t.Helper()
		for _, ver := range []string{"v1", "v2"} {
			var got SubscriptionList
			if err := json.Unmarshal([]byte(do(t, base, call{method: "GET", path: "/hmi/" + ver + "/subscriptions", status: 200})), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s subscriptions (-want +got):\n%s", ver, diff)
			}
		}
	}
	check(base)
	// An hmnfd started again on the database sees the same subscriptions.
	if err := svc.store.Close(); err != nil {
		t.Fatal(err)
	}
	base2, _ := apiServer(t, path)
	check(base2)
	for _, c := range []call{
		{method: "DELETE", path: "/hmi/v1/subscribe", body: `{"Subscriber":"cray-bss@x0","Url":"http://cray-bss/boot/v1/scn"}`, status: 200},
		{method: "DELETE", path: "/hmi/v2/subscriptions/x1c0s0b0n0/agents/other", status: 400, contains: `"title":"Bad DELETE request","detail":"No matching subscription for DELETE"`},
		{method: "DELETE", path: "/hmi/v2/subscriptions/x1c0s0b0n0/agents", status: 204},
		// HMS answers 204 when nothing matches too, and sends an empty list as null.
		{method: "DELETE", path: "/hmi/v2/subscriptions/x1c0s0b0n0/agents", status: 204},
		{method: "GET", path: "/hmi/v2/subscriptions", status: 200, contains: `{"SubscriptionList":null}`},
		{method: "GET", path: "/hmi/v2/subscriptions/x1c0s0b0n0", status: 200, contains: `{"SubscriptionList":null}`},
	} {
		do(t, base2, c)
	}
}

func TestAPIBadInput(t *testing.T) { pg.EachDB(t, testAPIBadInput) }

func testAPIBadInput(t *testing.T, db testpeer.DB) {
	base, svc := apiServer(t, db(t))
	do(t, base, call{method: "POST", path: "/hmi/v2/subscriptions/x1c0s0b0n0/agents/a", body: `{"Components":["all"],"States":["On"],"Url":"http://h/x"}`, status: 200})
	big := `{"States":["On"],"Url":"http://h/x","Components":["` + strings.Repeat("x", 2<<20) + `"]}`
	tests := []struct {
		name string
		call call
	}{
		{"malformed v1 subscriber", call{method: "POST", path: "/hmi/v1/subscribe", body: `{"Subscriber":"agent@nodeX","States":["On"],"Url":"http://h/x"}`, status: 400, contains: "Subscriber"}},
		{"malformed v2 xname", call{method: "POST", path: "/hmi/v2/subscriptions/x1c99/agents/a", body: `{"States":["On"],"Url":"http://h/x"}`, status: 400, contains: "x1c99"}},
		{"bad agent", call{method: "POST", path: "/hmi/v2/subscriptions/x1c0s0b0n0/agents/a%20b", body: `{"States":["On"],"Url":"http://h/x"}`, status: 400, contains: "agent"}},
		{"url not http", call{method: "POST", path: "/hmi/v2/subscriptions/x1c0s0b0n1/agents/a", body: `{"Components":["all"],"States":["On"],"Url":"file:///etc/passwd"}`, status: 400, contains: "Url"}},
		{"unknown state", call{method: "POST", path: "/hmi/v2/subscriptions/x1c0s0b0n1/agents/a", body: `{"Components":["all"],"States":["Sleeping"],"Url":"http://h/x"}`, status: 400, contains: "Sleeping"}},
		{"bad component", call{method: "POST", path: "/hmi/v2/subscriptions/x1c0s0b0n1/agents/a", body: `{"States":["On"],"Components":["n12"],"Url":"http://h/x"}`, status: 400, contains: "Components[0]"}},
		{"wrong type", call{method: "POST", path: "/hmi/v2/subscriptions/x1c0s0b0n1/agents/a", body: `{"States":"On","Url":"http://h/x"}`, status: 400, contains: "States"}},
		{"malformed json", call{method: "POST", path: "/hmi/v2/subscriptions/x1c0s0b0n1/agents/a", body: `{"States":[`, status: 400}},
		{"duplicate", call{method: "POST", path: "/hmi/v2/subscriptions/x1c0s0b0n0/agents/a", body: `{"Components":["all"],"States":["Off"],"Url":"http://h/x"}`, status: 400, contains: "Subscription exists, cannot modify in POST operation"}},
		{"oversized", call{method: "POST", path: "/hmi/v2/subscriptions/x1c0s0b0n1/agents/a", body: big, status: 413}},
		{"patch makes it invalid", call{method: "PATCH", path: "/hmi/v2/subscriptions/x1c0s0b0n0/agents/a", body: `{"Url":"gopher://h"}`, status: 400, contains: "Url"}},
		{"scn without components", call{method: "POST", path: "/hmi/v1/scn", body: `{"State":"On"}`, status: 400, contains: "Components"}},
		{"scn bad xname", call{method: "POST", path: "/hmi/v2/scn", body: `{"State":"On","Components":["bogus"]}`, status: 400, contains: "bogus"}},
		{"unknown version", call{method: "GET", path: "/hmi/v3/subscriptions", status: 404}},
		{"params unknown field", call{method: "PATCH", path: "/hmi/v1/params", body: `{"Nope":1}`, status: 400, contains: "Nope"}},
		{"params read-only", call{method: "PATCH", path: "/hmi/v1/params", body: `{"Port":1,"Scn_in_url":"http://x"}`, status: 400,
			contains: `{"type":"about:blank","title":"Invalid Request","detail":"Parameter 'port' can't be changed in PATCH operation; Parameter 'scn_in_url' can't be changed in PATCH operation; ","instance":"/params","status":400}`}},
		{"params wrong types", call{method: "PATCH", path: "/hmi/v2/params", body: `{"SM_url":1,"Debug":"x"}`, status: 400,
			contains: `"detail":"Invalid data type in Debug field. Invalid data type in SM_url field. "`}},
		{"v2 without Components", call{method: "POST", path: "/hmi/v2/subscriptions/x1c0s0b0n1/agents/a", body: `{"States":["On"],"Url":"http://h/x"}`, status: 400,
			contains: `"detail":"Subscription request missing Components array field."`}},
		{"v2 with empty Components", call{method: "POST", path: "/hmi/v2/subscriptions/x1c0s0b0n1/agents/a", body: `{"Components":[],"States":["On"],"Url":"http://h/x"}`, status: 400,
			contains: "missing Components"}},
		{"params out of range", call{method: "PATCH", path: "/hmi/v1/params", body: `{"Scn_max_cache":0}`, status: 400, contains: "Scn_max_cache"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { do(t, base, tc.call) })
	}
	want := []Subscription{{Subscriber: "a@x1c0s0b0n0", SubscriberComponent: "x1c0s0b0n0", SubscriberAgent: "a", Components: []string{"all"}, States: []string{"On"}, Url: "http://h/x"}}
	if diff := cmp.Diff(want, svc.List("")); diff != "" {
		t.Errorf("bad input changed what is stored (-want +got):\n%s", diff)
	}
}

func TestAPIParamsAndHealth(t *testing.T) { pg.EachDB(t, testAPIParamsAndHealth) }

func testAPIParamsAndHealth(t *testing.T, db testpeer.DB) {
	base, svc := apiServer(t, db(t))
	do(t, base, call{method: "PATCH", path: "/hmi/v2/params", body: `{"Scn_max_cache":50,"Debug":1}`, status: 200, contains: `"Scn_max_cache":50`})
	do(t, base, call{method: "GET", path: "/hmi/v1/params", status: 200, contains: `"Debug":1`})
	if got := svc.batchMax.Load(); got != 50 {
		t.Errorf("batch max after PATCH = %d, want 50", got)
	}
	// Every field but Port and Scn_in_url may be sent, as HMS allows.
	do(t, base, call{method: "PATCH", path: "/hmi/v1/params", status: 200,
		body:     `{"KV_url":"mem:","Nosm":1,"Scn_cache_delay":3,"Scn_retries":4,"SM_retries":2,"SM_timeout":7,"SM_url":"http://hsm/hsm/v2","Telemetry_host":"k:9092:t","Use_telemetry":1}`,
		contains: `"KV_url":"mem:","Nosm":1,`})
	do(t, base, call{method: "GET", path: "/hmi/v2/params", status: 200, contains: `"SM_timeout":7,"SM_url":"http://hsm/hsm/v2","Telemetry_host":"k:9092:t","Use_telemetry":1}`})
	do(t, base, call{method: "GET", path: "/hmi/v1/health", status: 200, contains: `"WorkerPool":"Senders:0`})
	do(t, base, call{method: "GET", path: "/hmi/v2/health", status: 200, contains: `"KvStore":"` + svc.store.Kind() + `: OK"`})
	do(t, base, call{method: "GET", path: "/hmi/v2/liveness", status: 204})
	do(t, base, call{method: "GET", path: "/hmi/v2/readiness", status: 204})
}

// TestOpenAPIDocument: the document, served under both versions, lists
// every route and no other.
func TestOpenAPIDocument(t *testing.T) {
	base, svc := apiServer(t, dbPath(t))
	doc := do(t, base, call{method: "GET", path: "/hmi/v2/openapi.yaml", status: 200, contains: "openapi: 3"})
	do(t, base, call{method: "GET", path: "/hmi/v1/openapi.yaml", status: 200, contains: "openapi: 3"})
	routetest.Check(t, NewAPI(svc, quietLog(), Params{}, nil).Handler(), []byte(doc))
}
