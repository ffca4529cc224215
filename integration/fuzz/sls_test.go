package fuzz

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/layout"
)

// hostileBodies are issue 18's malformed and ambiguous inputs, in shapes
// every JSON route meets: invalid UTF-8, a key twice (also in another case
// and spelled with an escape), trailing data, wrong types, nesting, huge
// numbers, control characters, truncation.
var hostileBodies = []string{
	"{\"ExtraProperties\":{\"Name\":\"a\xffb\"}}",
	`{"NID":5,"NID":6}`,
	`{"ID":"x1c0s0b0n0","id":"x1c0s0b0n1"}`,
	`{"N\u0049D":5,"NID":6}`,
	`{"Xname":"x1c0s0b0n0"} {"Xname":"x1c0s0b0n1"}`,
	`{"Xname":"x1c0s0b0n0"}]`,
	`{"NID":{"a":1}}`,
	`{"NID":1e999}`,
	`{"NID":-9223372036854775809}`,
	`{"Name":"HM\u0000N"}`,
	"{\"Name\":\"HMN\u202e\"}",
	strings.Repeat("[", 10000),
	`{"a":` + strings.Repeat(`{"a":`, 2000) + `1` + strings.Repeat("}", 2001),
	`{"Xname":"x1c0s0b0n0","Class":`,
	``, `null`, `[]`, `"x"`, `0`,
}

// withHostile adds every hostile body on each of the routes, param given.
func withHostile(seeds []seed, param string, routes ...string) []seed {
	for _, r := range routes {
		for _, b := range hostileBodies {
			seeds = append(seeds, seed{route: r, param: param, body: b})
		}
	}
	return seeds
}

// startSLS starts an sls with a node, a switch and a network, and
// returns it as a target.
func startSLS(f *testing.F) *target {
	f.Helper()
	d, err := layout.StartDaemon(f.Context(), layout.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(f.TempDir(), "sls.db")})
	if err != nil {
		f.Fatal(err)
	}
	run(f, d)
	tg := &target{base: d.URL(), client: newClient(), dumps: []string{"/v1/dumpstate"}}
	tg.mustDo(f, "POST", "/v1/hardware", `{"Xname":"x3000c0s1b0n0","Class":"River","ExtraProperties":{"NID":1,"Role":"Compute","Aliases":["nid000001"]}}`, 201)
	tg.mustDo(f, "POST", "/v1/hardware", `{"Xname":"x3000c0w14","Class":"River","ExtraProperties":{"Brand":"Dell","Password":"secret"}}`, 201)
	tg.mustDo(f, "POST", "/v1/networks", slsHMN, 201)
	return tg
}

const slsHMN = `{"Name":"HMN","FullName":"Hardware Management Network","IPRanges":["10.254.0.0/17"],"Type":"ethernet","ExtraProperties":{"CIDR":"10.254.0.0/17","MTU":9000,"Subnets":[{"Name":"bootstrap_dhcp","CIDR":"10.254.0.0/24","VlanID":4}]}}`

func FuzzSLSHardware(f *testing.F) {
	tg := startSLS(f)
	routes := []route{
		{method: "POST", path: "/v1/hardware"},
		{method: "PUT", path: "/v1/hardware/{}"},
		{method: "DELETE", path: "/v1/hardware/{}"},
	}
	seeds := []seed{
		{route: "POST /v1/hardware", body: `{"Xname":"x3000c0s2b0n0","Class":"River"}`},
		{route: "POST /v1/hardware", body: `{"Xname":"x3000c0w14","Class":"River"}`},
		{route: "PUT /v1/hardware/{}", param: "x3000c0s1b0n0", body: `{"Class":"Mountain","ExtraProperties":{"NID":"12"}}`},
		{route: "PUT /v1/hardware/{}", param: "x3000c0s1b0n0", body: `{"Class":"River","ExtraProperties":{"NodeNics":["x3000c0s1b0","port7"]}}`},
		{route: "PUT /v1/hardware/{}", param: "x3000c0s1b0n0", body: `{"Class":"River","ExtraProperties":{"NID":1,"Role":"Compute"}}`},
		{route: "PUT /v1/hardware/{}", param: "x1", body: `{"Xname":"x2","Class":"River"}`},
		{route: "PUT /v1/hardware/{}", param: "x3000c0s1b0n0", body: "{\"Class\":\"River\",\"ExtraProperties\":{\"NID\":1,\"Alias\":\"n\xff\"}}"},
		{route: "PUT /v1/hardware/{}", param: "x3000c0s1b0n0", body: `{"Class":"River","ExtraProperties":{"NID":5,"NID":6}}`},
		{route: "PUT /v1/hardware/{}", param: "x3000c0s1b0n0", body: `{"Class":"River","ExtraProperties":{"Role":"Compute","role":"Storage"}}`},
		{route: "DELETE /v1/hardware/{}", param: "x5"},
		{route: "DELETE /v1/hardware/{}", param: "foo/../x3000c0w14"},
	}
	fuzzRoutes(f, tg, routes, withHostile(seeds, "x3000c0s1b0n0", "POST /v1/hardware", "PUT /v1/hardware/{}"))
}

func FuzzSLSNetworks(f *testing.F) {
	tg := startSLS(f)
	routes := []route{
		{method: "POST", path: "/v1/networks"},
		{method: "PUT", path: "/v1/networks/{}"},
		{method: "PATCH", path: "/v1/networks/{}"},
		{method: "DELETE", path: "/v1/networks/{}"},
	}
	seeds := []seed{
		{route: "POST /v1/networks", body: slsHMN},
		{route: "PUT /v1/networks/{}", param: "NMN", body: `{"Type":"ethernet","IPRanges":["10.252.0.0/17"]}`},
		{route: "PUT /v1/networks/{}", param: "X", body: `{"Type":"token-ring"}`},
		{route: "PUT /v1/networks/{}", param: "X", body: `{"Type":"ethernet","IPRanges":["10.0.0.0"]}`},
		{route: "PUT /v1/networks/{}", param: "X", body: `{"Type":"ethernet","ExtraProperties":{"Subnets":[{"VlanID":"4"}]}}`},
		{route: "POST /v1/networks", body: `{"Name":"HM\u0000N","Type":"ethernet"}`},
		{route: "POST /v1/networks", body: "{\"Name\":\"HMN\u202e\",\"Type\":\"ethernet\"}"},
		{route: "PUT /v1/networks/{}", param: "HMN", body: "{\"Type\":\"ethernet\",\"ExtraProperties\":{\"Owner\":\"\xff\"}}"},
		{route: "PUT /v1/networks/{}", param: "HMN", body: `{"Type":"ethernet","ExtraProperties":{"MTU":1,"MTU":2}}`},
		{route: "PUT /v1/networks/{}", param: "HM\x00N", body: `{"Type":"ethernet"}`},
		{route: "PATCH /v1/networks/{}", param: "HMN", body: `{"FullName":"a","FullName":"b"}`},
		{route: "PATCH /v1/networks/{}", param: "HMN", body: `{"FullName":"a","fullname":"b"}`},
		{route: "PATCH /v1/networks/{}", param: "HMN", body: `{"FullName":"HMN (patched)","ExtraProperties":{"MTU":1500,"Owner":null}}`},
		{route: "PATCH /v1/networks/{}", param: "HMN", body: `{"Name":"HMN2"}`},
		{route: "PATCH /v1/networks/{}", param: "HMN", body: `{"IPRanges":["10.0.0.0"]}`},
		{route: "PATCH /v1/networks/{}", param: "HMN", body: `[1]`},
		{route: "DELETE /v1/networks/{}", param: "CAN"},
	}
	fuzzRoutes(f, tg, routes, withHostile(seeds, "HMN", "POST /v1/networks", "PUT /v1/networks/{}", "PATCH /v1/networks/{}"))
}

const dumpBoundary = "fuzzboundary"

// multipartDump wraps body as the sls_dump field of a multipart form.
func multipartDump(field, body string) string {
	return "--" + dumpBoundary + "\r\nContent-Disposition: form-data; name=\"" + field + "\"; filename=\"d.json\"\r\n" +
		"Content-Type: application/json\r\n\r\n" + body + "\r\n--" + dumpBoundary + "--\r\n"
}

func FuzzSLSLoadstate(f *testing.F) {
	tg := startSLS(f)
	routes := []route{{method: "POST", path: "/v1/loadstate", ctype: "multipart/form-data; boundary=" + dumpBoundary}}
	dump := `{"Hardware":{"x3000c0s1b0n0":{"Parent":"x3000c0s1b0","Xname":"x3000c0s1b0n0","Type":"comptype_node","Class":"River","TypeString":"Node","ExtraProperties":{"NID":1,"Role":"Compute"}}},"Networks":{"HMN":` + slsHMN + `}}`
	seeds := []seed{
		{route: "POST /v1/loadstate", body: multipartDump("sls_dump", dump)},
		{route: "POST /v1/loadstate", body: multipartDump("sls_dump", `{"Hardware":{},"Networks":{}}`)},
		{route: "POST /v1/loadstate", body: multipartDump("other", dump)},
		{route: "POST /v1/loadstate", body: multipartDump("sls_dump", dump)[:120]},
		{route: "POST /v1/loadstate", body: multipartDump("sls_dump", strings.Replace(dump, `"NID":1`, `"NID":1,"NID":2`, 1))},
		{route: "POST /v1/loadstate", body: multipartDump("sls_dump", strings.Replace(dump, `"Compute"`, "\"Comp\xffute\"", 1))},
		{route: "POST /v1/loadstate", body: multipartDump("sls_dump", strings.Replace(dump, `"x3000c0s1b0n0":{"Parent"`, `"x3000c0s1b0n1":{"Parent"`, 1))},
		{route: "POST /v1/loadstate", body: multipartDump("sls_dump", dump+"{}")},
	}
	for _, b := range hostileBodies {
		seeds = append(seeds, seed{route: "POST /v1/loadstate", body: multipartDump("sls_dump", b)})
	}
	fuzzRoutes(f, tg, routes, seeds)
}

func FuzzSLSQueries(f *testing.F) {
	tg := startSLS(f)
	routes := []route{
		{method: "GET", path: "/v1/search/hardware", readOnly: true},
		{method: "GET", path: "/v1/search/networks", readOnly: true},
		{method: "GET", path: "/v1/hardware/{}", readOnly: true},
		{method: "GET", path: "/v1/networks/{}", readOnly: true},
		{method: "GET", path: "/v1/hardware", readOnly: true},
		{method: "GET", path: "/v1/networks", readOnly: true},
		{method: "GET", path: "/v1/dumpstate", readOnly: true},
	}
	var seeds []seed
	for _, q := range []string{"", "type=comptype_node", "parent=x3000c0w14&extra_properties.VendorName=ethernet1/1/36",
		"xname=X3000c0s1b0n0&class=River", "power_connector=x1m0p0v1", "ip_address=10.254.0.1&name=HMN", "%zz", "a=b&a=c",
		"extra_properties.=", "extra_properties.Password=secret", "type=comptype_ncard;class=River", "type=comptype_bogus",
		"class=Desert", "parent=x1c9", "colour=red", "name=HM%00N", "extra_properties.NID=1&extra_properties.NID=2"} {
		seeds = append(seeds, seed{route: "GET /v1/search/hardware", query: q}, seed{route: "GET /v1/search/networks", query: q})
	}
	seeds = append(seeds,
		seed{route: "GET /v1/hardware/{}", param: "x3000c0s1b0n0"}, seed{route: "GET /v1/hardware/{}", param: "foo"},
		seed{route: "GET /v1/networks/{}", param: "HMN"}, seed{route: "GET /v1/networks/{}", param: "HM\u202eN"},
		seed{route: "GET /v1/hardware", query: "redact=1"}, seed{route: "GET /v1/dumpstate", query: "x=1"})
	fuzzRoutes(f, tg, routes, seeds)
}
