package layout

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hmsuite/hms/internal/testpeer"
)

func TestHardwareWrites(t *testing.T) { pg.EachDB(t, testHardwareWrites) }

func testHardwareWrites(t *testing.T, db testpeer.DB) {
	e := newTestEnvOn(t, db(t))
	tests := []struct {
		name         string
		method, path string
		body         string
		wantCode     int
		wantDetail   string // substring of the problem detail, for errors
	}{
		{name: "put creates", method: "PUT", path: "/v1/hardware/x3000c0s1b0n0",
			body: `{"Class":"River","ExtraProperties":{"NID":1,"Role":"Compute"}}`, wantCode: 201},
		{name: "put replaces", method: "PUT", path: "/v1/hardware/x3000c0s1b0n0",
			body: `{"Class":"river","ExtraProperties":{"NID":2,"Role":"Compute"}}`, wantCode: 200},
		{name: "put normalises path", method: "PUT", path: "/v1/hardware/X3000C0S02B0N0",
			body: `{"Xname":"x3000c0s2b0n0","Class":"River"}`, wantCode: 201},
		{name: "post creates", method: "POST", path: "/v1/hardware",
			body: `{"Xname":"x3000c0w14","Class":"River","ExtraProperties":{"Brand":"Dell"}}`, wantCode: 201},
		{name: "post conflict", method: "POST", path: "/v1/hardware",
			body: `{"Xname":"x3000c0w14","Class":"River"}`, wantCode: 409, wantDetail: "object already exists"},
		{name: "post without xname", method: "POST", path: "/v1/hardware",
			body: `{"Class":"River"}`, wantCode: 400, wantDetail: "missing required Xname field"},
		{name: "malformed path xname", method: "PUT", path: "/v1/hardware/x1c9",
			body: `{"Class":"River"}`, wantCode: 400, wantDetail: "invalid xname"},
		{name: "not an xname", method: "GET", path: "/v1/hardware/foo", wantCode: 400, wantDetail: "invalid xname"},
		{name: "body xname mismatch", method: "PUT", path: "/v1/hardware/x1",
			body: `{"Xname":"x2","Class":"River"}`, wantCode: 400, wantDetail: `Xname "x2" in the body does not match x1`},
		{name: "type mismatch", method: "PUT", path: "/v1/hardware/x1",
			body: `{"Type":"comptype_node","Class":"River"}`, wantCode: 400, wantDetail: `Type "comptype_node" does not match xname x1`},
		{name: "unknown class", method: "PUT", path: "/v1/hardware/x1",
			body: `{"Class":"Desert"}`, wantCode: 400, wantDetail: "invalid component class"},
		{name: "post unknown class", method: "POST", path: "/v1/hardware",
			body: `{"Xname":"x5","Class":"Desert"}`, wantCode: 400, wantDetail: "invalid Class field"},
		{name: "post bad xname", method: "POST", path: "/v1/hardware",
			body: `{"Xname":"x5c99","Class":"River"}`, wantCode: 400, wantDetail: "invalid Xname field"},
		{name: "post malformed", method: "POST", path: "/v1/hardware", body: `{`, wantCode: 400, wantDetail: "error decoding JSON"},
		{name: "missing class", method: "PUT", path: "/v1/hardware/x1",
			body: `{}`, wantCode: 400, wantDetail: "missing fields Class "},
		{name: "invalid json", method: "PUT", path: "/v1/hardware/x1",
			body: `{"Class":`, wantCode: 400, wantDetail: "unable to unmarshal JSON payload"},
		{name: "class wrong type", method: "PUT", path: "/v1/hardware/x1",
			body: `{"Class":7}`, wantCode: 400, wantDetail: "unable to unmarshal JSON payload"},
		{name: "NID must be a number", method: "PUT", path: "/v1/hardware/x1c0s1b0n0",
			body: `{"Class":"Mountain","ExtraProperties":{"NID":"12"}}`, wantCode: 400, wantDetail: "ExtraProperties.NID: must be a non-negative integer"},
		{name: "Role must be a string", method: "PUT", path: "/v1/hardware/x1c0s1b0n0",
			body: `{"Class":"Mountain","ExtraProperties":{"Role":["Compute"]}}`, wantCode: 400, wantDetail: "ExtraProperties.Role: must be a string"},
		{name: "NodeNics must be xnames", method: "PUT", path: "/v1/hardware/x3000c0w14j1",
			body: `{"Class":"River","ExtraProperties":{"NodeNics":["x3000c0s1b0","port7"]}}`, wantCode: 400, wantDetail: `ExtraProperties.NodeNics: element 1: "port7" is not a valid xname`},
		{name: "cabinet network VLan type", method: "PUT", path: "/v1/hardware/x9",
			body: `{"Class":"River","ExtraProperties":{"Networks":{"cn":{"HMN":{"VLan":"x"}}}}}`, wantCode: 400, wantDetail: "ExtraProperties.Networks: field"},
		{name: "extra not an object", method: "PUT", path: "/v1/hardware/x9",
			body: `{"Class":"River","ExtraProperties":[1]}`, wantCode: 400, wantDetail: "ExtraProperties: must be a JSON object"},
		{name: "type SLS does not store", method: "PUT", path: "/v1/hardware/x1c0s1b0n0p0",
			body: `{"Class":"River"}`, wantCode: 400, wantDetail: "does not store objects of type Processor"},
		{name: "body too large", method: "PUT", path: "/v1/hardware/x1",
			body: `{"Class":"River","ExtraProperties":{"Model":"` + strings.Repeat("a", BodyLimit) + `"}}`, wantCode: 413},
		{name: "delete missing", method: "DELETE", path: "/v1/hardware/x5", wantCode: 404},
		{name: "get missing", method: "GET", path: "/v1/hardware/x5", wantCode: 404, wantDetail: "no such component not in DB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.version().Counter
			code, body := e.do(tt.method, tt.path, tt.body)
			if code != tt.wantCode {
				t.Fatalf("%s %s = %d %s, want %d", tt.method, tt.path, code, body, tt.wantCode)
			}
			if code >= 400 {
				if d := detail(t, body); !strings.Contains(d, tt.wantDetail) {
					t.Errorf("detail %q, want it to contain %q", d, tt.wantDetail)
				}
				if after := e.version().Counter; after != before {
					t.Errorf("a failed request moved the version counter from %d to %d", before, after)
				}
			}
		})
	}
}

func TestHardwareDerivedFields(t *testing.T) { pg.EachDB(t, testHardwareDerivedFields) }

func testHardwareDerivedFields(t *testing.T, db testpeer.DB) {
	e := newTestEnvOn(t, db(t))
	e.do("PUT", "/v1/hardware/x3000c0s1b0", `{"Class":"River"}`)
	e.do("PUT", "/v1/hardware/x3000c0s1b0n1", `{"Class":"River"}`)
	code, _ := e.do("PUT", "/v1/hardware/x3000c0s1b0n0",
		`{"Class":"RIVER","Parent":"bogus","Children":["bogus"],"TypeString":"bogus","LastUpdated":5,
		  "ExtraProperties":{"NID":7,"Role":"Compute","Aliases":["nid000007"],"Rack":"R12","Tags":{"a":[1,2]}}}`)
	if code != http.StatusCreated {
		t.Fatalf("PUT = %d", code)
	}
	tests := []struct {
		name string
		path string
		want Hardware
	}{
		{name: "node keeps unknown extra fields", path: "/v1/hardware/x3000c0s1b0n0", want: Hardware{
			Parent: "x3000c0s1b0", Xname: "x3000c0s1b0n0", Type: "comptype_node", Class: River, TypeString: "Node",
			LastUpdated: testNow.Unix(), LastUpdatedTime: "2026-03-04 05:06:07.123456 +0000 UTC",
			ExtraProperties: json.RawMessage(`{"NID":7,"Role":"Compute","Aliases":["nid000007"],"Rack":"R12","Tags":{"a":[1,2]}}`),
		}},
		{name: "bmc lists stored children", path: "/v1/hardware/x3000c0s1b0", want: Hardware{
			Parent: "x3000c0s1", Children: []string{"x3000c0s1b0n0", "x3000c0s1b0n1"}, Xname: "x3000c0s1b0",
			Type: "comptype_ncard", Class: River, TypeString: "NodeBMC",
			LastUpdated: testNow.Unix(), LastUpdatedTime: "2026-03-04 05:06:07.123456 +0000 UTC",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := e.do("GET", tt.path, "")
			if code != http.StatusOK {
				t.Fatalf("GET = %d %s", code, body)
			}
			var got Hardware
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("GET %s (-want +got):\n%s", tt.path, diff)
			}
		})
	}
	if n, err := mustHardware(t, e, "x3000c0s1b0n0").Node(); err != nil || n.NID != 7 || n.Role != "Compute" {
		t.Errorf("Node() = %+v, %v; want NID 7, Role Compute", n, err)
	}
}

func mustHardware(t *testing.T, e *testEnv, x string) Hardware {
	t.Helper()
	h, ok := e.store.GetHardware(x)
	if !ok {
		t.Fatalf("%s not stored", x)
	}
	return h
}

func TestCascadeDelete(t *testing.T) { pg.EachDB(t, testCascadeDelete) }

func testCascadeDelete(t *testing.T, db testpeer.DB) {
	tests := []struct {
		name        string
		del         string
		wantGone    []string
		wantKept    []string
		wantRemains int
	}{
		{name: "slot takes its bmc and node", del: "x3000c0s1",
			wantGone: []string{"x3000c0s1", "x3000c0s1b0", "x3000c0s1b0n0"},
			wantKept: []string{"x3000c0", "x3000c0s10", "x3000c0s10b0n0", "x3000c0w14j1"}, wantRemains: 65},
		{name: "child leaves its parent", del: "x3000c0s5b0n0",
			wantGone: []string{"x3000c0s5b0n0"}, wantKept: []string{"x3000c0s5b0", "x3000c0s5"}, wantRemains: 67},
		{name: "switch takes its connectors", del: "x3000c0w14",
			wantGone: []string{"x3000c0w14", "x3000c0w14j1", "x3000c0w14j8"}, wantKept: []string{"x3000c0w15j1"}, wantRemains: 59},
		{name: "cabinet takes everything", del: "x3000",
			wantGone: []string{"x3000", "x3000c0", "x3000c0w15j8", "x3000c0s16b0n0"}, wantRemains: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnvOn(t, db(t))
			e.loadFile("river.json")
			before := e.version().Counter
			if code, body := e.do("DELETE", "/v1/hardware/"+tt.del, ""); code != http.StatusOK {
				t.Fatalf("DELETE = %d %s", code, body)
			}
			for _, x := range tt.wantGone {
				if code, _ := e.do("GET", "/v1/hardware/"+x, ""); code != http.StatusNotFound {
					t.Errorf("GET %s = %d after deleting %s, want 404", x, code, tt.del)
				}
			}
			for _, x := range tt.wantKept {
				if code, _ := e.do("GET", "/v1/hardware/"+x, ""); code != http.StatusOK {
					t.Errorf("GET %s = %d after deleting %s, want 200", x, code, tt.del)
				}
			}
			_, body := e.do("GET", "/v1/hardware", "")
			if got := len(xnames(t, body)); got != tt.wantRemains {
				t.Errorf("%d objects remain, want %d", got, tt.wantRemains)
			}
			if got := e.version().Counter; got != before+1 {
				t.Errorf("version counter %d, want %d", got, before+1)
			}
			// The database agrees with the index. (A second store cannot
			// open it: on PostgreSQL the first holds its advisory lock.)
			var stored int
			if err := e.store.db.R.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM hardware`).Scan(&stored); err != nil {
				t.Fatal(err)
			}
			if stored != tt.wantRemains {
				t.Errorf("database holds %d objects, want %d", stored, tt.wantRemains)
			}
		})
	}
}

func TestSearchHardware(t *testing.T) { pg.EachDB(t, testSearchHardware) }

func testSearchHardware(t *testing.T, db testpeer.DB) {
	e := newTestEnvOn(t, db(t))
	e.loadFile("river.json")
	tests := []struct {
		query      string
		wantCode   int
		want       []string // xnames, or nil to check only the count
		wantCount  int
		wantDetail string
	}{
		{query: "type=comptype_node", wantCode: 200, wantCount: 16},
		{query: "parent=x3000c0w14&type=comptype_mgmt_switch_connector&extra_properties.VendorName=ethernet1/1/3",
			wantCode: 200, want: []string{"x3000c0w14j3"}},
		{query: "extra_properties.VendorName=ethernet1/1/3", wantCode: 200, want: []string{"x3000c0w14j3", "x3000c0w15j3"}},
		{query: "type=comptype_mgmt_switch_connector&class=River&extra_properties.VendorName=ethernet1%2F1%2F8&parent=x3000c0w15",
			wantCode: 200, want: []string{"x3000c0w15j8"}},
		{query: "node_nics=X3000C0S03B0", wantCode: 200, want: []string{"x3000c0w14j3"}},
		{query: "extra_properties.NodeNics=X3000C0S03B0", wantCode: 200, want: []string{"x3000c0w14j3"}},
		{query: "extra_properties.Role=Management", wantCode: 200, want: []string{"x3000c0s1b0n0", "x3000c0s2b0n0"}},
		{query: "extra_properties.NID=5", wantCode: 200, want: []string{"x3000c0s5b0n0"}},
		{query: "extra_properties.Aliases=uan01", wantCode: 200, want: []string{"x3000c0s16b0n0"}},
		{query: "xname=x3000c0s1b0n0", wantCode: 200, want: []string{"x3000c0s1b0n0"}},
		{query: "parent=x3000c0&type=comptype_mgmt_switch", wantCode: 200, want: []string{"x3000c0w14", "x3000c0w15"}},
		{query: "parent=s0", wantCode: 200, want: []string{"x3000"}},
		{query: "class=river&type=comptype_cabinet", wantCode: 200, want: []string{"x3000"}},
		{query: "", wantCode: 200, wantCount: 68},
		{query: "class=Mountain", wantCode: 200, want: nil},
		{query: "extra_properties.VendorName=ethernet1/1/99", wantCode: 200, want: nil},
		{query: "type=comptype_bogus", wantCode: 400, wantDetail: "query parameter type"},
		{query: "class=Desert", wantCode: 400, wantDetail: "query parameter class"},
		{query: "parent=x1c9", wantCode: 400, wantDetail: "query parameter parent"},
		{query: "colour=red", wantCode: 400, wantDetail: `unknown query parameter "colour"`},
		{query: "type=comptype_node&type=comptype_ncard", wantCode: 400, wantDetail: "given 2 times"},
		{query: "type=", wantCode: 400, wantDetail: "empty value"},
		{query: "extra_properties.=x", wantCode: 400, wantDetail: "missing the field name"},
		{query: "extra_properties.SNMPAuthPassword=vault://hms-creds/x3000c0w14", wantCode: 400, wantDetail: "credential"},
		{query: "type=%zz", wantCode: 400, wantDetail: "malformed query"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			code, body := e.do("GET", "/v1/search/hardware?"+tt.query, "")
			if code != tt.wantCode {
				t.Fatalf("search %q = %d %s, want %d", tt.query, code, body, tt.wantCode)
			}
			if code != http.StatusOK {
				if d := detail(t, body); !strings.Contains(d, tt.wantDetail) {
					t.Errorf("detail %q, want it to contain %q", d, tt.wantDetail)
				}
				return
			}
			if tt.want == nil && tt.wantCount == 0 && strings.TrimSpace(body) != "null" {
				t.Fatalf("no match answered %q, want null (shipped SLS)", body)
			}
			got := xnames(t, body)
			if tt.want == nil {
				if len(got) != tt.wantCount {
					t.Errorf("%d results, want %d", len(got), tt.wantCount)
				}
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
		})
	}
}

func TestListHardwareEmpty(t *testing.T) {
	e := newTestEnv(t)
	code, body := e.do("GET", "/v1/hardware", "")
	if code != http.StatusOK || strings.TrimSpace(body) != "null" {
		t.Errorf("GET /hardware on an empty store = %d %q, want 200 null (shipped SLS)", code, body)
	}
	code, body = e.do("GET", "/v1/networks", "")
	if code != http.StatusOK || strings.TrimSpace(body) != "null" {
		t.Errorf("GET /networks on an empty store = %d %q, want 200 null (shipped SLS)", code, body)
	}
}

// TestJSONEndsWithNewline: every JSON answer ends with a newline, as the
// shipped services' json.Encoder writes it (line-oriented tools rely on it).
func TestJSONEndsWithNewline(t *testing.T) {
	e := newTestEnv(t)
	e.loadFile("river.json")
	for _, path := range []string{
		"/v1/hardware", "/v1/hardware/x3000c0s1b0n0", "/v1/search/hardware?type=comptype_node",
		"/v1/networks", "/v1/networks/HMN", "/v1/search/networks?type=ethernet", "/v1/dumpstate",
		"/v1/version", "/v1/health", "/v1/hardware/x9999",
	} {
		if code, body := e.do("GET", path, ""); !strings.HasSuffix(body, "}\n") && !strings.HasSuffix(body, "]\n") {
			t.Errorf("GET %s: %d, body does not end with a newline: ...%q", path, code, body[max(0, len(body)-20):])
		}
	}
}

// TestBulkHardware: the extension PUT /v1/bulk/hardware stores a list in
// one go, and a list with a bad object stores nothing.
func TestBulkHardware(t *testing.T) { pg.EachDB(t, testBulkHardware) }

func testBulkHardware(t *testing.T, db testpeer.DB) {
	e := newTestEnvOn(t, db(t))
	if code, body := e.do("PUT", "/v1/hardware/x3000c0s1b0n0", `{"Class":"River"}`); code != 201 {
		t.Fatalf("PUT: %d %s", code, body)
	}
	before := e.version().Counter
	code, body := e.do("PUT", "/v1/bulk/hardware", `[{"Xname":"x3000c0s1b0n0","Class":"River","ExtraProperties":{"NID":7}},
		{"Xname":"x3000c0s2b0n0","Class":"River"}, {"Xname":"x3000","Class":"River"}]`)
	if code != 204 {
		t.Fatalf("bulk PUT: %d %s", code, body)
	}
	if got := e.version().Counter; got != before+3 {
		t.Errorf("counter %d, want %d (one per object)", got, before+3)
	}
	if code, body := e.do("GET", "/v1/hardware/x3000c0s1b0n0", ""); code != 200 || !strings.Contains(body, `"NID":7`) {
		t.Errorf("replaced object: %d %s", code, body)
	}
	for _, tt := range []struct{ name, body, detail string }{
		{name: "bad xname", body: `[{"Xname":"x3000c0s3b0n0","Class":"River"},{"Xname":"x1c9","Class":"River"}]`, detail: "[1]: Xname"},
		{name: "twice", body: `[{"Xname":"x3000c0s3b0n0","Class":"River"},{"Xname":"X3000C0S3B0N0","Class":"River"}]`, detail: "[1]: x3000c0s3b0n0 is listed twice"},
		{name: "not a list", body: `{"Xname":"x3000c0s3b0n0","Class":"River"}`},
	} {
		code, body := e.do("PUT", "/v1/bulk/hardware", tt.body)
		if code != 400 || !strings.Contains(body, tt.detail) {
			t.Errorf("%s: %d %s, want 400 naming %q", tt.name, code, body, tt.detail)
		}
	}
	if code, _ := e.do("GET", "/v1/hardware/x3000c0s3b0n0", ""); code != 404 {
		t.Errorf("a refused list stored its good object: GET %d", code)
	}
}
