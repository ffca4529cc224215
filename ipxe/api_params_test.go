package ipxe

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/testpeer"
)

const emptyCI = `"cloud-init":{"meta-data":null,"user-data":null,"phone-home":{"pub_key_dsa":"","pub_key_rsa":"","pub_key_ecdsa":"","instance_id":"","hostname":"","fqdn":""}}`

// TestBootParametersVerbs: every verb of /bootparameters, on SQLite and
// PostgreSQL.
func TestBootParametersVerbs(t *testing.T) { pg.EachDB(t, testBootParametersVerbs) }

func testBootParametersVerbs(t *testing.T, db testpeer.DB) {
	h := newHarnessOn(t, db(t))
	h.nodes(node("x3000c0s1b0n0", "Compute", "", 7, []string{"aa:bb:cc:00:00:01"}))
	const bp = "/boot/v1/bootparameters"
	steps := []struct {
		name, method, path, body string
		status                   int
		token                    bool   // a bss-referral-token header is expected
		want                     string // body substring ("" = empty body)
	}{
		{name: "empty store is null", method: "GET", path: bp, status: 200, want: "null\n"},
		{name: "post", method: "POST", path: bp, body: `{"hosts":["x3000c0s1b0n0"],"params":"a=1","kernel":"http://k","initrd":"http://i"}`, status: 201, token: true},
		{name: "post again fails", method: "POST", path: bp, body: `{"hosts":["x3000c0s1b0n0"],"kernel":"http://k2"}`, status: 400, want: `"detail":"Bad Request: Already exists: x3000c0s1b0n0"`},
		{name: "post nid exists", method: "POST", path: bp, body: `{"nids":[5],"kernel":"http://k"}`, status: 201, token: true},
		{name: "post nid again", method: "POST", path: bp, body: `{"nids":[5],"kernel":"http://k"}`, status: 400, want: `Already exists: 5"`},
		{name: "post image only", method: "POST", path: bp, body: `{"kernel":"http://k9","params":"img=1"}`, status: 201},
		{name: "post empty", method: "POST", path: bp, body: `{}`, status: 201},
		{name: "post bad json", method: "POST", path: bp, body: `Tgarbage`, status: 400, want: `"detail":"Bad Request: invalid character 'T' looking for beginning of value"`},
		{name: "post empty body", method: "POST", path: bp, body: ``, status: 400, want: `"detail":"Bad Request: EOF"`},
		{name: "get by name", method: "GET", path: bp + "?name=x3000c0s1b0n0", status: 200,
			want: `[{"hosts":["x3000c0s1b0n0"],"params":"a=1","kernel":"http://k","initrd":"http://i",` + emptyCI + `}]`},
		{name: "patch keeps kernel", method: "PATCH", path: bp, body: `{"hosts":["x3000c0s1b0n0"],"params":"b=2","kernel":"http://other","cloud-init":{"meta-data":{"m":{"a":1,"b":2}}}}`, status: 200},
		{name: "patch merges meta-data", method: "PATCH", path: bp, body: `{"hosts":["x3000c0s1b0n0"],"cloud-init":{"meta-data":{"m":{"a":null,"c":3}}}}`, status: 200},
		{name: "get patched", method: "GET", path: bp + "?mac=AA:BB:CC:00:00:01", status: 200,
			want: `[{"macs":["AA:BB:CC:00:00:01"],"params":"b=2","kernel":"http://k","initrd":"http://i","cloud-init":{"meta-data":{"m":{"b":2,"c":3}},"user-data":null`},
		{name: "patch missing host", method: "PATCH", path: bp, body: `{"hosts":["x1c0s0b0n0"],"params":"x"}`, status: 404,
			want: `"detail":"Not Found: Error looking up x1c0s0b0n0: Key /params/x1c0s0b0n0 does not exist"`},
		{name: "patch unknown mac skipped", method: "PATCH", path: bp, body: `{"macs":["de:ad:be:ef:00:00"],"params":"x"}`, status: 200},
		{name: "put replaces", method: "PUT", path: bp, body: `{"hosts":["x3000c0s1b0n0"],"kernel":"http://k3"}`, status: 200, token: true},
		{name: "get replaced", method: "GET", path: bp + "?name=x3000c0s1b0n0", status: 200,
			want: `[{"hosts":["x3000c0s1b0n0"],"kernel":"http://k3",` + emptyCI + `}]`},
		{name: "get by body", method: "GET", path: bp, body: `{"kernel":"http://k9"}`, status: 200, want: `[{"params":"img=1","kernel":"http://k9",`},
		{name: "get body {}", method: "GET", path: bp, body: `{}`, status: 400, want: `"No specified data requested"`},
		{name: "get bad body", method: "GET", path: bp, body: `garbage`, status: 400,
			want: `"detail":"Failed to interpret request body 'garbage': invalid character 'g' looking for beginning of value"`},
		{name: "get bad nid", method: "GET", path: bp + "?nid=1notANid", status: 400, want: `"Bad Request - Invalid nid '1notANid'"`},
		{name: "get nothing", method: "GET", path: bp + "?name=x9c0s0b0n0&mac=1notAMac", status: 404,
			want: `"Cannot find boot parameters for requested Hosts or MACs"`},
		{name: "delete missing", method: "DELETE", path: bp, body: `{"hosts":["x9999c0s2b0n0"],"nids":[2147483647]}`, status: 400,
			want: `"Key x9999c0s2b0n0 deletion: Key /params/x9999c0s2b0n0 does not exist"`},
		{name: "delete partly missing deletes nothing", method: "DELETE", path: bp, body: `{"hosts":["x3000c0s1b0n0","x9999c0s2b0n0"]}`, status: 400,
			want: `"Key x9999c0s2b0n0 deletion: Key /params/x9999c0s2b0n0 does not exist"`},
		{name: "still there", method: "GET", path: bp + "?name=x3000c0s1b0n0", status: 200, want: `[{"hosts":["x3000c0s1b0n0"],"kernel":"http://k3"`},
		{name: "delete kernel clears refs", method: "DELETE", path: bp, body: `{"kernel":"http://k3"}`, status: 200},
		{name: "ref cleared", method: "GET", path: bp + "?name=x3000c0s1b0n0", status: 200, want: `[{"hosts":["x3000c0s1b0n0"],` + emptyCI + `}]`},
		{name: "delete", method: "DELETE", path: bp, body: `{"hosts":["x3000c0s1b0n0"],"macs":["de:ad:be:ef:00:00"]}`, status: 200},
		{name: "gone", method: "GET", path: bp + "?name=x3000c0s1b0n0", status: 404},
		{name: "head served as get", method: "HEAD", path: "/boot/v1/dumpstate", status: 200},
		{name: "405 names methods", method: "PUT", path: "/boot/v1/bootscript", status: 405, want: `"detail":"allow GET"`},
		{name: "hello", method: "GET", path: "/boot/v1/bootparameters/", status: 200, want: "Hello World!"},
	}
	for _, st := range steps {
		status, hdr, body := h.do(t, st.method, st.path, st.body)
		if status != st.status {
			t.Fatalf("%s: status %d, want %d; body %s", st.name, status, st.status, body)
		}
		if got := hdr.Get(tokenHeader) != ""; got != st.token {
			t.Errorf("%s: token header present = %v, want %v", st.name, got, st.token)
		}
		if st.want == "" && st.method != "GET" && st.method != "HEAD" && body != "" {
			t.Errorf("%s: body %q, want none", st.name, body)
		}
		if !strings.Contains(body, st.want) {
			t.Errorf("%s: body %s\nwant it to contain %s", st.name, body, st.want)
		}
	}
}

func TestReferralTokenInScript(t *testing.T) {
	h := newHarness(t)
	h.nodes(node("x3000c0s1b0n0", "Compute", "", 1, nil))
	hdr, _ := h.mustDo(t, http.MethodPut, "/boot/v1/bootparameters", `{"hosts":["Compute"],"kernel":"http://k"}`, 200)
	tok := hdr.Get(tokenHeader)
	if len(tok) != 36 {
		t.Fatalf("token %q is not a UUID", tok)
	}
	_, script := h.mustDo(t, http.MethodGet, "/boot/v1/bootscript?name=x3000c0s1b0n0", "", 200)
	if !strings.Contains(script, " bss_referral_token="+tok+" ") {
		t.Errorf("script lacks the token of the role entry:\n%s", script)
	}
	// PATCH keeps the token; a new PUT issues a new one.
	h.mustDo(t, http.MethodPatch, "/boot/v1/bootparameters", `{"hosts":["Compute"],"params":"p"}`, 200)
	_, script = h.mustDo(t, http.MethodGet, "/boot/v1/bootscript?name=x3000c0s1b0n0", "", 200)
	if !strings.Contains(script, "bss_referral_token="+tok) {
		t.Errorf("PATCH changed the token:\n%s", script)
	}
	hdr, _ = h.mustDo(t, http.MethodPut, "/boot/v1/bootparameters", `{"hosts":["Compute"],"kernel":"http://k"}`, 200)
	if hdr.Get(tokenHeader) == tok {
		t.Error("a second PUT reused the token")
	}
}

// TestParamsSurviveRestart: boot parameters and the endpoint history are
// read back by a store opened afresh, on SQLite and PostgreSQL.
func TestParamsSurviveRestart(t *testing.T) { pg.EachDB(t, testParamsSurviveRestart) }

func testParamsSurviveRestart(t *testing.T, db testpeer.DB) {
	dir := db(t)
	store, err := OpenStore(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(t.Context(), store, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Put(t.Context(), BootParams{Hosts: []string{"Default"}, Kernel: "http://k", Params: "p"}); err != nil {
		t.Fatal(err)
	}
	svc.hist.touch("x1c0s0b0n0", EndpointBootscript, fixedNow)
	if err := store.flushHistory(t.Context(), svc.hist); err != nil {
		t.Fatal(err)
	}
	store.Close()
	store, err = OpenStore(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	svc, err = New(t.Context(), store, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := store.entry("Default"); !ok || e.Kernel != "http://k" || e.Params != "p" || e.Token == "" {
		t.Errorf("after reopen Default = %+v, %v", e, ok)
	}
	if got := svc.hist.query("x1c0s0b0n0", "bootscript"); len(got) != 1 || got[0].LastEpoch != fixedNow.Unix() {
		t.Errorf("history after reopen = %+v", got)
	}
}

// FuzzBootParametersBody: any body to any verb is answered without a 5xx
// and leaves the store readable.
func FuzzBootParametersBody(f *testing.F) {
	for _, b := range []string{`{"hosts":["x1"],"kernel":"k"}`, `{"macs":["zz"],"nids":[-1]}`, `{"kernel":"k","initrd":"i"}`,
		`{"hosts":["Global"],"cloud-init":{"meta-data":{"a":{"b":null}}}}`, `[`, ``} {
		f.Add(b, uint8(0))
	}
	h := newHarness(f)
	methods := []string{"GET", "POST", "PUT", "PATCH", "DELETE"}
	f.Fuzz(func(t *testing.T, body string, m uint8) {
		method := methods[int(m)%len(methods)]
		st, _, out := h.do(t, method, "/boot/v1/bootparameters", body)
		if st >= 500 {
			t.Fatalf("%s %q: %d %s", method, body, st, out)
		}
		if st, _, out := h.do(t, "GET", "/boot/v1/bootparameters", ""); st != 200 {
			t.Fatalf("list after %s %q: %d %s", method, body, st, out)
		}
	})
}
