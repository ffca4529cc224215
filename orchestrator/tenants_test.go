package orchestrator

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTenants: with Cray-Tenant-Name, templates are the tenant's own (a
// name may be the tenant's and no tenant's at once), sessions and
// components are the tenant's, and a tenant's session boots only the
// tenant's nodes (its HSM group) even when its template names others.
// Without the header everything is in reach. A tenant HSM has no group
// for is refused.
func TestTenants(t *testing.T) {
	const ten = "vcluster-a"
	e := newEnv(t, n1, n2)
	e.cluster.groups[ten] = []string{n1}
	tmpl := func(nodes ...string) map[string]any {
		return map[string]any{"enable_cfs": false, "boot_sets": map[string]any{"c": map[string]any{
			"path": e.cluster.manifestURL("img1"), "type": "s3", "node_list": nodes}}}
	}
	var got Template
	if code := e.callAs(ten, "PUT", "/v2/sessiontemplates/t1", tmpl(n1, n2), &got); code != 200 || got.Tenant != ten {
		t.Fatalf("PUT the tenant's t1: %d %+v", code, got)
	}
	if code := e.call("PUT", "/v2/sessiontemplates/t1", tmpl(n2), &got); code != 200 || got.Tenant != "" {
		t.Fatalf("PUT no tenant's t1: %d %+v", code, got)
	}
	if code := e.callAs("nobody", "PUT", "/v2/sessiontemplates/t2", tmpl(n1), nil); code != 400 {
		t.Errorf("PUT for a tenant HSM has no group for: %d, want 400", code)
	}
	tenants := func(ts []Template) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.Name+"@"+t.Tenant)
		}
		return out
	}
	var list []Template
	e.callAs(ten, "GET", "/v2/sessiontemplates", nil, &list)
	if d := cmp.Diff([]string{"t1@" + ten}, tenants(list)); d != "" {
		t.Errorf("the tenant's templates (-want +got):\n%s", d)
	}
	e.call("GET", "/v2/sessiontemplates", nil, &list)
	if d := cmp.Diff([]string{"t1@", "t1@" + ten}, tenants(list)); d != "" {
		t.Errorf("every template (-want +got):\n%s", d)
	}

	e.callAs(ten, "POST", "/v2/sessions", map[string]any{"name": "s1", "operation": "boot", "template_name": "t1"}, nil)
	e.reconcile()
	var sess Session
	if code := e.callAs(ten, "GET", "/v2/sessions/s1", nil, &sess); code != 200 || sess.Tenant != ten || sess.Components != n1 {
		t.Errorf("the tenant's session: %d %+v", code, sess)
	}
	if code := e.callAs("vcluster-b", "GET", "/v2/sessions/s1", nil, nil); code != 404 {
		t.Errorf("another tenant's session: %d, want 404", code)
	}
	var sessions []Session
	e.callAs("vcluster-b", "GET", "/v2/sessions", nil, &sessions)
	if len(sessions) != 0 {
		t.Errorf("another tenant lists %+v", sessions)
	}
	if c := e.component(n2); c.Enabled || c.Session != "" {
		t.Errorf("%s, not the tenant's, was taken by its session: %+v", n2, c)
	}
	var comps []Component
	e.callAs(ten, "GET", "/v2/components", nil, &comps)
	if len(comps) != 1 || comps[0].ID != n1 {
		t.Errorf("the tenant's components: %+v", comps)
	}
	for _, w := range []struct {
		method, path string
		body         any
		want         int
	}{
		{method: "GET", path: "/v2/components/" + n2, want: 404},
		{method: "PATCH", path: "/v2/components/" + n2, body: map[string]any{"enabled": true}, want: 404},
		{method: "PUT", path: "/v2/components/" + n2, body: map[string]any{"enabled": true}, want: 404},
		{method: "DELETE", path: "/v2/components/" + n2, want: 404},
		{method: "PATCH", path: "/v2/components", body: []map[string]any{{"id": n2, "enabled": true}}, want: 404},
		{method: "PATCH", path: "/v2/components", body: map[string]any{"patch": map[string]any{"retry_policy": 2},
			"filters": map[string]any{"ids": n1 + "," + n2}}, want: 404},
		{method: "PATCH", path: "/v2/components", body: map[string]any{"patch": map[string]any{"retry_policy": 2},
			"filters": map[string]any{"session": "s1"}}, want: 200},
		{method: "PATCH", path: "/v2/components/" + n1, body: map[string]any{"retry_policy": 1}, want: 200},
	} {
		if code := e.callAs(ten, w.method, w.path, w.body, nil); code != w.want {
			t.Errorf("%s %s %v as the tenant: %d, want %d", w.method, w.path, w.body, code, w.want)
		}
	}
	if c := e.component(n2); c.Enabled || c.RetryPolicy != nil {
		t.Errorf("%s changed by the tenant: %+v", n2, c)
	}

	if code := e.callAs(ten, "DELETE", "/v2/sessiontemplates/t1", nil, nil); code != 204 {
		t.Errorf("DELETE the tenant's t1: %d", code)
	}
	if code := e.call("GET", "/v2/sessiontemplates/t1", nil, &got); code != 200 || got.Tenant != "" {
		t.Errorf("no tenant's t1 after the tenant's went: %d %+v", code, got)
	}
}

// TestApplyStagedTenant: with Cray-Tenant-Name, POST /v2/applystaged
// applies the staged session of the tenant's nodes only and reports the
// others failed, untouched (it once ignored the header and applied all).
func TestApplyStagedTenant(t *testing.T) {
	const ten = "vcluster-a"
	e := newEnv(t, n1, n2)
	e.cluster.groups[ten] = []string{n1}
	e.template("t1", "img2", n1, n2)
	e.session(`{"name":"st","operation":"reboot","template_name":"t1","stage":true}`)
	e.reconcile()
	var res ApplyStagedResult
	if code := e.callAs(ten, "POST", "/v2/applystaged", `{"xnames":["`+n1+`","`+n2+`"]}`, &res); code != 200 {
		t.Fatalf("applystaged: %d", code)
	}
	if d := cmp.Diff(ApplyStagedResult{Succeeded: []string{n1}, Failed: []string{n2}, Ignored: []string{}}, res); d != "" {
		t.Errorf("applystaged for the tenant (-want +got):\n%s", d)
	}
	if c := e.component(n2); c.Enabled || c.Session != "" || c.StagedState.Session != "st" {
		t.Errorf("%s, not the tenant's, was applied: %+v", n2, c)
	}
	if c := e.component(n1); !c.Enabled || c.Session != "st" {
		t.Errorf("%s, the tenant's, was not applied: %+v", n1, c)
	}
}
