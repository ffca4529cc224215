package orchestrator

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/testpeer"
)

type problemBody struct {
	Type, Title, Detail string
	Status              int
}

func TestTemplatesAPI(t *testing.T) { pg.EachDB(t, testTemplatesAPI) }

func testTemplatesAPI(t *testing.T, db testpeer.DB) {
	e := newEnvOn(t, db, nil, "x3000c0s1b0n0", "x3000c0s2b0n0")
	e.template("compute-1", "img1", "x3000c0s1b0n0")
	var got map[string]any
	if code := e.call("GET", "/v2/sessiontemplates/compute-1", nil, &got); code != 200 {
		t.Fatalf("GET: %d", code)
	}
	if got["name"] != "compute-1" || got["tenant"] != "" {
		t.Errorf("name/tenant: %v", got)
	}
	links := got["links"].([]any)[0].(map[string]any)
	if links["href"] != "/v2/sessiontemplates/compute-1" || links["rel"] != "self" {
		t.Errorf("links: %v", links)
	}
	bs := got["boot_sets"].(map[string]any)["compute"].(map[string]any)
	for _, k := range []string{"path", "type", "node_list", "kernel_parameters", "rootfs_provider", "rootfs_provider_passthrough"} {
		if _, ok := bs[k]; !ok {
			t.Errorf("boot set lacks %s: %v", k, bs)
		}
	}
	var patched Template
	if code := e.call("PATCH", "/v2/sessiontemplates/compute-1", `{"description":"d","boot_sets":{"compute":{"kernel_parameters":"quiet"}}}`, &patched); code != 200 {
		t.Fatalf("PATCH: %d", code)
	}
	if patched.Description != "d" || patched.BootSets["compute"].KernelParameters != "quiet" || patched.BootSets["compute"].Path == "" {
		t.Errorf("PATCH merged wrong: %+v", patched)
	}
	var list []Template
	if code := e.call("GET", "/v2/sessiontemplates", nil, &list); code != 200 || len(list) != 1 {
		t.Errorf("list: %d %v", code, list)
	}
	for _, tc := range []struct {
		name, body string
	}{
		{name: "no boot sets", body: `{"boot_sets":{}}`},
		{name: "no nodes", body: `{"boot_sets":{"b":{"path":"http://x/m.json","type":"s3"}}}`},
		{name: "no path", body: `{"boot_sets":{"b":{"type":"s3","node_list":["x1c0s0b0n0"]}}}`},
		{name: "unknown field", body: `{"bogus":1,"boot_sets":{"b":{"path":"p","type":"s3","node_list":["x1c0s0b0n0"]}}}`},
		{name: "bad arch", body: `{"boot_sets":{"b":{"path":"p","type":"s3","arch":"MIPS","node_list":["x1c0s0b0n0"]}}}`},
		{name: "name mismatch", body: `{"boot_sets":{"b":{"name":"c","path":"p","type":"s3","node_list":["x1c0s0b0n0"]}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p problemBody
			if code := e.call("PUT", "/v2/sessiontemplates/bad", tc.body, &p); code != 400 || p.Title != "Bad Request" || p.Status != 400 {
				t.Errorf("got %d %+v, want 400 problem", code, p)
			}
		})
	}
	var msg string
	if code := e.call("GET", "/v2/sessiontemplatesvalid/compute-1", nil, &msg); code != 200 || msg != "Valid" {
		t.Errorf("valid: %d %q", code, msg)
	}
	e.template("ghost", "img1", "x9000c0s1b0n0")
	if code := e.call("GET", "/v2/sessiontemplatesvalid/ghost", nil, &msg); code != 200 || msg == "Valid" {
		t.Errorf("valid of unknown node: %d %q", code, msg)
	}
	var ex Template
	if code := e.call("GET", "/v2/sessiontemplatetemplate", nil, &ex); code != 200 || len(ex.BootSets) != 1 {
		t.Errorf("template template: %d %+v", code, ex)
	}
	if code := e.call("DELETE", "/v2/sessiontemplates/compute-1", nil, nil); code != 204 {
		t.Errorf("DELETE: %d", code)
	}
	var p problemBody
	if code := e.call("GET", "/v2/sessiontemplates/compute-1", nil, &p); code != 404 || p.Title != "The resource was not found" {
		t.Errorf("GET deleted: %d %+v", code, p)
	}
	if code := e.call("GET", "/v2/sessiontemplatesvalid/compute-1", nil, nil); code != 404 {
		t.Errorf("valid of deleted: %d", code)
	}
}

func TestSessionsAPI(t *testing.T) { pg.EachDB(t, testSessionsAPI) }

func testSessionsAPI(t *testing.T, db testpeer.DB) {
	e := newEnvOn(t, db, nil, "x3000c0s1b0n0", "x3000c0s2b0n0")
	e.template("t1", "img1", "x3000c0s1b0n0", "x3000c0s2b0n0")
	e.template("t-missing", "missing", "x3000c0s1b0n0")
	e.template("t-ghost", "img1", "x9000c0s1b0n0")
	var s map[string]any
	if code := e.call("POST", "/v2/sessions", `{"name":"s1","operation":"boot","template_name":"t1","limit":"x3000c0s1b0n0"}`, &s); code != 201 {
		t.Fatalf("POST: %d %v", code, s)
	}
	want := map[string]any{"name": "s1", "tenant": "", "operation": "boot", "template_name": "t1",
		"limit": "x3000c0s1b0n0", "stage": false, "components": "", "include_disabled": false,
		"status": map[string]any{"start_time": "2026-11-24T12:00:00Z", "end_time": nil, "status": "pending", "error": nil}}
	if d := cmp.Diff(want, s); d != "" {
		t.Errorf("session (-want +got):\n%s", d)
	}
	var p problemBody
	if code := e.call("POST", "/v2/sessions", `{"name":"s1","operation":"boot","template_name":"t1"}`, &p); code != 409 ||
		p.Title != "The resource to be created already exists" {
		t.Errorf("duplicate: %d %+v", code, p)
	}
	for _, tc := range []struct{ name, body string }{
		{name: "bad operation", body: `{"operation":"explode","template_name":"t1"}`},
		{name: "unknown template", body: `{"operation":"boot","template_name":"nope"}`},
		{name: "manifest not found", body: `{"operation":"boot","template_name":"t-missing"}`},
		{name: "unknown node", body: `{"operation":"boot","template_name":"t-ghost"}`},
		{name: "unknown field", body: `{"operation":"boot","template_name":"t1","x":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code := e.call("POST", "/v2/sessions", tc.body, &p); code != 400 || p.Status != 400 {
				t.Errorf("got %d %+v", code, p)
			}
		})
	}
	var list []Session
	if code := e.call("GET", "/v2/sessions?status=pending", nil, &list); code != 200 || len(list) != 1 {
		t.Errorf("list pending: %d %v", code, list)
	}
	if code := e.call("GET", "/v2/sessions?status=complete", nil, &list); code != 200 || len(list) != 0 {
		t.Errorf("list complete: %d %v", code, list)
	}
	if code := e.call("GET", "/v2/sessions?min_age=bogus", nil, nil); code != 400 {
		t.Errorf("bad min_age: %d", code)
	}
	var st map[string]any
	if code := e.call("GET", "/v2/sessions/s1/status", nil, &st); code != 200 {
		t.Fatalf("status: %d", code)
	}
	for _, k := range []string{"status", "managed_components_count", "phases", "percent_successful", "percent_failed",
		"percent_staged", "error_summary", "timing"} {
		if _, ok := st[k]; !ok {
			t.Errorf("status lacks %s: %v", k, st)
		}
	}
	if code := e.call("DELETE", "/v2/sessions/s1", nil, nil); code != 204 {
		t.Errorf("DELETE: %d", code)
	}
	if code := e.call("GET", "/v2/sessions/s1", nil, &p); code != 404 {
		t.Errorf("GET deleted: %d", code)
	}
}

func TestComponentsAPI(t *testing.T) { pg.EachDB(t, testComponentsAPI) }

func testComponentsAPI(t *testing.T, db testpeer.DB) {
	e := newEnvOn(t, db, nil)
	var out []Component
	if code := e.call("PUT", "/v2/components", `[{"id":"x1c0s0b0n0","enabled":true,"last_action":{"action":"session_setup"}},{"id":"x1c0s0b0n1","session":"s9"}]`, &out); code != 200 || len(out) != 2 {
		t.Fatalf("PUT: %d %v", code, out)
	}
	c := e.component("x1c0s0b0n0")
	if !c.Enabled || c.Status.Status != StatusStable || c.LastAction.LastUpdated != "2026-11-24T12:00:00Z" || c.DesiredState.LastUpdated != "" {
		t.Errorf("PUT component: %+v", c)
	}
	var got Component
	if code := e.call("PATCH", "/v2/components/x1c0s0b0n0", `{"status":{"phase":"powering_off"},"retry_policy":2}`, &got); code != 200 {
		t.Fatalf("PATCH: %d", code)
	}
	if got.Status.Phase != PhasePoweringOff || got.Status.Status != StatusPowerOffPending || !got.Enabled || *got.RetryPolicy != 2 {
		t.Errorf("PATCH merged wrong: %+v", got)
	}
	var p problemBody
	if code := e.call("PATCH", "/v2/components/x1c0s0b0n0", `{"actual_state":{"bss_token":"t"}}`, &p); code != 409 ||
		p.Title != "The update was not allowed due to a conflict" {
		t.Errorf("actual_state while powering off: %d %+v", code, p)
	}
	if code := e.call("PATCH", "/v2/components/x1c0s0b0n9", `{"enabled":false}`, &p); code != 404 {
		t.Errorf("PATCH unknown: %d", code)
	}
	if code := e.call("PATCH", "/v2/components", `{"patch":{"enabled":false},"filters":{"session":"s9"}}`, &out); code != 200 ||
		len(out) != 1 || out[0].ID != "x1c0s0b0n1" {
		t.Errorf("bulk by session: %d %+v", code, out)
	}
	if code := e.call("PATCH", "/v2/components", `{"patch":{"error":"e"},"filters":{"ids":"x1c0s0b0n0,x1c0s0b0n7"}}`, nil); code != 404 {
		t.Errorf("bulk with a bad id: %d", code)
	}
	if code := e.call("PATCH", "/v2/components?skip_bad_ids=true", `{"patch":{"error":"e"},"filters":{"ids":"x1c0s0b0n0,x1c0s0b0n7"}}`, &out); code != 200 || len(out) != 1 {
		t.Errorf("bulk skipping bad ids: %d %+v", code, out)
	}
	if code := e.call("PATCH", "/v2/components", `[{"id":"x1c0s0b0n1","error":"f"}]`, &out); code != 200 || out[0].Error != "f" {
		t.Errorf("bulk array: %d %+v", code, out)
	}
	for q, n := range map[string]int{"": 2, "?enabled=true": 1, "?phase=powering_off": 1, "?ids=x1c0s0b0n1": 1,
		"?status=stable": 1, "?session=s9": 1, "?page_size=1": 1, "?start_after_id=x1c0s0b0n0": 1} {
		if code := e.call("GET", "/v2/components"+q, nil, &out); code != 200 || len(out) != n {
			t.Errorf("GET %s: %d, %d components, want %d", q, code, len(out), n)
		}
	}
	if code := e.call("GET", "/v2/components?enabled=maybe", nil, nil); code != 400 {
		t.Errorf("bad enabled: %d", code)
	}
	if code := e.call("DELETE", "/v2/components/x1c0s0b0n1", nil, nil); code != 204 {
		t.Errorf("DELETE: %d", code)
	}
	if code := e.call("DELETE", "/v2/components/x1c0s0b0n1", nil, nil); code != 404 {
		t.Errorf("DELETE again: %d", code)
	}
}

func TestOptionsVersionHealth(t *testing.T) { pg.EachDB(t, testOptionsVersionHealth) }

func testOptionsVersionHealth(t *testing.T, db testpeer.DB) {
	e := newEnvOn(t, db, nil)
	var o map[string]any
	if code := e.call("GET", "/v2/options", nil, &o); code != 200 || o["polling_frequency"] != 15.0 || o["default_retry_policy"] != 3.0 {
		t.Errorf("options: %d %v", code, o)
	}
	if code := e.call("PATCH", "/v2/options", `{"polling_frequency":2,"site_note":"x"}`, &o); code != 200 || o["polling_frequency"] != 2.0 || o["site_note"] != "x" {
		t.Errorf("PATCH options: %d %v", code, o)
	}
	for _, bad := range []string{`{"polling_frequency":-1}`, `{"reject_nids":"yes"}`, `{"logging_level":"LOUD"}`, `{}`} {
		if code := e.call("PATCH", "/v2/options", bad, nil); code != 400 {
			t.Errorf("PATCH %s: %d", bad, code)
		}
	}
	e.restart()
	if e.call("GET", "/v2/options", nil, &o); o["polling_frequency"] != 2.0 {
		t.Errorf("options after restart: %v", o)
	}
	var v Version
	for _, p := range []string{"/v2", "/v2/version", "/apis/bos/v2/version"} {
		if code := e.call("GET", p, nil, &v); code != 200 || v.Major != "2" {
			t.Errorf("GET %s: %d %+v", p, code, v)
		}
	}
	var h map[string]string
	if code := e.call("GET", "/v2/healthz", nil, &h); code != 200 || h["dbStatus"] != "ok" || h["apiStatus"] != "ok" {
		t.Errorf("healthz: %d %v", code, h)
	}
}
