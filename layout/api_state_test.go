package layout

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/httpserver/routetest"
	"github.com/hmsuite/hms/internal/testpeer"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestLoadStateAtomic(t *testing.T) { pg.EachDB(t, testLoadStateAtomic) }

func testLoadStateAtomic(t *testing.T, db testpeer.DB) {
	mountain := readTestdata(t, "mountain.json")
	breakEntry := func(old, new string) []byte {
		t.Helper()
		b := bytes.Replace(mountain, []byte(old), []byte(new), 1)
		if bytes.Equal(b, mountain) {
			t.Fatalf("%q not found in mountain.json", old)
		}
		return b
	}
	tests := []struct {
		name       string
		dump       []byte
		wantCode   int
		wantDetail string
	}{
		{name: "bad xname key", dump: breakEntry(`"x1000c7": {`, `"x1000c9": {`), wantCode: 400,
			wantDetail: `Hardware["x1000c9"]: Xname "x1000c7" does not match its key`},
		{name: "bad xname", dump: breakEntry(`"Xname": "x1000c7"`+"\n", `"Xname": "x1000c9"`+"\n"), wantCode: 400,
			wantDetail: `Hardware["x1000c7"]: Xname "x1000c9" does not match its key`},
		{name: "bad class", dump: breakEntry(`"Class": "Mountain"`, `"Class": "Desert"`), wantCode: 400,
			wantDetail: `Class "Desert"`},
		{name: "class of the wrong JSON type", dump: breakEntry(`"Class": "Mountain"`, `"Class": 3`), wantCode: 400,
			wantDetail: `Hardware["x1000"]: Class: expected a string`},
		{name: "network of the wrong JSON type", dump: breakEntry(`"Type": "slingshot11"`, `"Type": 11`), wantCode: 400,
			wantDetail: `Networks["HSN"]: field Type`},
		{name: "bad NID", dump: breakEntry(`"NID": 1001`, `"NID": "1001"`), wantCode: 400,
			wantDetail: `Hardware["x1000c0s0b0n0"]: ExtraProperties.NID`},
		{name: "bad network", dump: breakEntry(`"Type": "slingshot11"`, `"Type": "carrier-pigeon"`), wantCode: 400,
			wantDetail: `Networks["HSN"]: Type "carrier-pigeon"`},
		{name: "duplicate xname", dump: []byte(`{"Hardware":{"x1":{"Class":"River"},"X01":{"Class":"River"}}}`), wantCode: 400,
			wantDetail: "xname x1 appears more than once"},
		{name: "truncated", dump: mountain[:len(mountain)/2], wantCode: 400, wantDetail: "sls_dump: truncated JSON"},
		{name: "not json", dump: []byte("hello"), wantCode: 400, wantDetail: "malformed JSON"},
		{name: "neither Hardware nor Networks", dump: []byte(`{"Hardwares":{"x1":{"Class":"River"}}}`), wantCode: 400,
			wantDetail: "expected a JSON object with Hardware and/or Networks"},
		{name: "empty object", dump: []byte(`{}`), wantCode: 400, wantDetail: "Hardware and/or Networks"},
		{name: "invalid UTF-8 in ExtraProperties", dump: breakEntry(`"NID": 1001`, "\"NID\": 1001, \"Name\": \"n\xff\""), wantCode: 400,
			wantDetail: "invalid UTF-8"},
		{name: "duplicate key in ExtraProperties", dump: breakEntry(`"NID": 1001`, `"NID": 1001, "NID": 1002`), wantCode: 400,
			wantDetail: `duplicate key "NID"`},
		{name: "trailing data", dump: append(append([]byte{}, mountain...), "{}"...), wantCode: 400, wantDetail: "unexpected data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnvOn(t, db(t))
			e.loadFile("river.json")
			_, before := e.do("GET", "/v1/dumpstate", "")
			ver := e.version()
			code, body := e.load(tt.dump)
			if code != tt.wantCode {
				t.Fatalf("loadstate = %d %s, want %d", code, body, tt.wantCode)
			}
			if d := detail(t, body); !strings.Contains(d, tt.wantDetail) {
				t.Errorf("detail %q, want it to contain %q", d, tt.wantDetail)
			}
			if _, after := e.do("GET", "/v1/dumpstate", ""); after != before {
				t.Error("a rejected loadstate changed the stored state")
			}
			if got := e.version(); got != ver {
				t.Errorf("version %+v after a rejected loadstate, want %+v", got, ver)
			}
		})
	}
}

func TestLoadStateRequests(t *testing.T) { pg.EachDB(t, testLoadStateRequests) }

func testLoadStateRequests(t *testing.T, db testpeer.DB) {
	e := newTestEnvOn(t, db(t))
	post := func(ctype, body string) (int, string) {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", e.url+"/v1/loadstate", strings.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		return e.send(req)
	}
	tests := []struct {
		name, ctype, body string
		wantCode          int
		wantDetail        string
	}{
		{name: "plain json accepted", ctype: "application/json", body: `{"Hardware":{"x1":{"Class":"Hill"}},"Networks":{}}`, wantCode: 204},
		{name: "wrong content type", ctype: "text/plain", body: `{}`, wantCode: 400, wantDetail: "Content-Type"},
		{name: "missing field", ctype: "multipart/form-data; boundary=XX", body: "--XX\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\n{}\r\n--XX--\r\n",
			wantCode: 400, wantDetail: "sls_dump: missing"},
		{name: "broken multipart", ctype: "multipart/form-data; boundary=XX", body: "garbage", wantCode: 400, wantDetail: "multipart"},
		{name: "truncated multipart", ctype: "multipart/form-data; boundary=XX", body: "--XX\r\nContent-Disposition: form-data; name=\"sls_dump\"\r\n\r\n{\"Hardware\":{\"x1\":{\"Cla",
			wantCode: 400, wantDetail: "multipart field sls_dump"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := post(tt.ctype, tt.body)
			if code != tt.wantCode {
				t.Fatalf("loadstate = %d %s, want %d", code, body, tt.wantCode)
			}
			if code >= 400 && !strings.Contains(detail(t, body), tt.wantDetail) {
				t.Errorf("detail %q, want it to contain %q", detail(t, body), tt.wantDetail)
			}
		})
	}
	t.Run("over the limit", func(t *testing.T) {
		e.api.DumpLimit = 1000
		defer func() { e.api.DumpLimit = DefaultDumpLimit }()
		if code, body := e.load(readTestdata(t, "river.json")); code != http.StatusRequestEntityTooLarge {
			t.Fatalf("loadstate of a dump over the limit = %d %s, want 413", code, body)
		}
		if n := e.store.HardwareCount(); n != 1 {
			t.Errorf("%d objects stored after a refused load, want the 1 loaded before", n)
		}
	})
}

func TestDumpRoundTrip(t *testing.T) { pg.EachDB(t, testDumpRoundTrip) }

func testDumpRoundTrip(t *testing.T, db testpeer.DB) {
	for _, name := range []string{"river.json", "mountain.json"} {
		t.Run(name, func(t *testing.T) {
			e := newTestEnvOn(t, db(t))
			e.loadFile(name)
			_, first := e.do("GET", "/v1/dumpstate", "")
			if code, body := e.load([]byte(first)); code != http.StatusNoContent {
				t.Fatalf("reloading the dump = %d %s", code, body)
			}
			_, second := e.do("GET", "/v1/dumpstate", "")
			if diff := cmp.Diff(first, second); diff != "" {
				t.Errorf("dump changed across a load (-first +second):\n%s", diff)
			}
			var in, out Dump
			json.Unmarshal(readTestdata(t, name), &in)
			if err := json.Unmarshal([]byte(first), &out); err != nil {
				t.Fatal(err)
			}
			if len(in.Hardware) != len(out.Hardware) || len(in.Networks) != len(out.Networks) {
				t.Errorf("dump has %d hardware and %d networks, file has %d and %d",
					len(out.Hardware), len(out.Networks), len(in.Hardware), len(in.Networks))
			}
			for x, h := range in.Hardware {
				got := out.Hardware[x]
				if got.Parent != h.Parent || got.Type != h.Type || got.TypeString != h.TypeString || got.Class != h.Class {
					t.Errorf("%s: dump has %s/%s/%s/%s, file has %s/%s/%s/%s", x,
						got.Parent, got.Type, got.TypeString, got.Class, h.Parent, h.Type, h.TypeString, h.Class)
				}
			}
		})
	}
}

// TestVersionCounter: a fresh database has a base version stamped when it
// was created, with microseconds like every later one.
func TestVersionCounter(t *testing.T) { pg.EachDB(t, testVersionCounter) }

func testVersionCounter(t *testing.T, db testpeer.DB) {
	e := newTestEnvOn(t, db(t))
	if code, body := e.do("GET", "/v1/version", ""); code != 200 || body != `{"Counter":0,"LastUpdated":"2026-03-04T05:06:07.123456Z"}`+"\n" {
		t.Fatalf("initial version = %d %s", code, body)
	}
	steps := []struct {
		method, path, body string
		wantDelta          int64
	}{
		{"PUT", "/v1/hardware/x1", `{"Class":"River"}`, 1},
		{"PUT", "/v1/hardware/x1", `{"Class":"River"}`, 1},
		{"GET", "/v1/hardware/x1", "", 0},
		{"PUT", "/v1/hardware/x1", `{"Class":"Nope"}`, 0},
		{"POST", "/v1/networks", `{"Name":"HMN","Type":"ethernet","IPRanges":["10.254.0.0/17"]}`, 1},
		{"PATCH", "/v1/networks/HMN", `{"FullName":"Hardware Management Network"}`, 1},
		{"DELETE", "/v1/networks/HMN", "", 1},
		{"DELETE", "/v1/hardware/x1", "", 1},
		{"DELETE", "/v1/hardware/x1", "", 0},
	}
	for _, s := range steps {
		before := e.version().Counter
		e.do(s.method, s.path, s.body)
		if got := e.version().Counter - before; got != s.wantDelta {
			t.Errorf("%s %s moved the counter by %d, want %d", s.method, s.path, got, s.wantDelta)
		}
	}
	var v Version
	_, body := e.do("GET", "/v1/version", "")
	if err := json.Unmarshal([]byte(body), &v); err != nil || v.Counter != 6 || v.LastUpdated != "2026-03-04T05:06:07.123456Z" {
		t.Errorf("version = %s, want Counter 6 at the test clock", body)
	}
}

func TestSecretsNeverLogged(t *testing.T) {
	e := newTestEnv(t)
	const secret = "hunter2-do-not-log"
	e.do("PUT", "/v1/hardware/x3000c0w14", `{"Class":"River","ExtraProperties":{"SNMPAuthPassword":"`+secret+`","SNMPPrivPassword":"`+secret+`"}}`)
	e.do("PUT", "/v1/hardware/x3000c0w15", `{"Class":"River","ExtraProperties":{"SNMPAuthPassword":["`+secret+`"]}}`)
	e.do("PUT", "/v1/hardware/x3000c0s1b0", `{"Class":"River","ExtraProperties":{"Password":7,"Username":"`+secret+`x"}}`)
	e.do("GET", "/v1/search/hardware?extra_properties.SNMPAuthPassword="+secret, "")
	e.do("GET", "/v1/search/hardware?extra_properties.Brand="+secret, "")
	_, dump := e.do("GET", "/v1/dumpstate", "")
	e.load([]byte(strings.Replace(dump, `"Class":"River"`, `"Class":"`+secret+`"`, 1)))
	if e.logs.Len() == 0 {
		t.Fatal("nothing was logged; the test would not notice a leak")
	}
	if strings.Contains(e.logs.String(), secret) {
		t.Errorf("the log contains a secret:\n%s", e.logs.String())
	}
	_, body := e.do("PUT", "/v1/hardware/x3000c0w15", `{"Class":"River","ExtraProperties":{"SNMPAuthPassword":["`+secret+`"]}}`)
	if strings.Contains(body, secret) {
		t.Errorf("the problem detail repeats a secret: %s", body)
	}
}

// TestProblemGolden pins whole problem+json bodies; refresh with -update.
// Hardware problems have no instance, the others do, as in the shipped SLS.
func TestProblemGolden(t *testing.T) {
	e := newTestEnv(t)
	tests := []struct {
		name, method, path, body string
	}{
		{name: "bad_xname", method: "GET", path: "/v1/hardware/x1c9"},
		{name: "xname_mismatch", method: "PUT", path: "/v1/hardware/x1", body: `{"Xname":"x2","Class":"River"}`},
		{name: "unknown_class", method: "PUT", path: "/v1/hardware/x1", body: `{"Class":"Desert"}`},
		{name: "invalid_json", method: "POST", path: "/v1/hardware", body: `{"Xname":`},
		{name: "unknown_search_param", method: "GET", path: "/v1/search/hardware?colour=red"},
		{name: "not_found", method: "GET", path: "/v1/hardware/x3000c0s1b0n0"},
		{name: "network_not_found", method: "GET", path: "/v1/networks/CAN"},
		{name: "unknown_route", method: "GET", path: "/v1/nowhere"},
		{name: "wrong_method", method: "POST", path: "/v1/version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, body := e.do(tt.method, tt.path, tt.body)
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, []byte(body), "", "  "); err != nil {
				t.Fatalf("not JSON: %q", body)
			}
			file := filepath.Join("testdata", "problems", tt.name+".json")
			if *update {
				os.MkdirAll(filepath.Dir(file), 0o755)
				if err := os.WriteFile(file, pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), pretty.String()); diff != "" {
				t.Errorf("problem body (-golden +got):\n%s", diff)
			}
		})
	}
}

// TestOpenAPIDocument: the served document lists every route and no other.
func TestOpenAPIDocument(t *testing.T) {
	e := newTestEnv(t)
	code, body := e.do("GET", "/v1/openapi.yaml", "")
	if code != 200 {
		t.Fatalf("GET /v1/openapi.yaml: %d", code)
	}
	routetest.Check(t, e.api.Handler(), []byte(body))
}
