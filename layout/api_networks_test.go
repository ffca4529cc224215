package layout

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hmsuite/hms/internal/testpeer"
)

func TestNetworksAPI(t *testing.T) { pg.EachDB(t, testNetworksAPI) }

func testNetworksAPI(t *testing.T, db testpeer.DB) {
	e := newTestEnvOn(t, db(t))
	const hmn = `{"Name":"HMN","FullName":"Hardware Management Network","IPRanges":["10.254.0.0/17"],"Type":"Ethernet",
		"ExtraProperties":{"CIDR":"10.254.0.0/17","MTU":9000,"VlanRange":[4],"Owner":"ops",
		"Subnets":[{"Name":"bootstrap_dhcp","CIDR":"10.254.0.0/17","VlanID":4}]}}`
	steps := []struct {
		name, method, path, body string
		wantCode                 int
		wantDetail               string
	}{
		{name: "create", method: "POST", path: "/v1/networks", body: hmn, wantCode: 201},
		{name: "create again", method: "POST", path: "/v1/networks", body: hmn, wantCode: 409, wantDetail: "A network with that name already exists in the database"},
		{name: "get", method: "GET", path: "/v1/networks/HMN", wantCode: 200},
		{name: "put replaces", method: "PUT", path: "/v1/networks/HMN", body: hmn, wantCode: 200},
		{name: "put creates", method: "PUT", path: "/v1/networks/NMN", body: `{"Type":"ethernet","IPRanges":["10.252.0.0/17"]}`, wantCode: 200},
		{name: "put: the path names it", method: "PUT", path: "/v1/networks/NMN", body: `{"Name":"HMN","Type":"ethernet","IPRanges":["10.252.0.0/17"]}`, wantCode: 200},
		{name: "bad type", method: "PUT", path: "/v1/networks/X", body: `{"Type":"token-ring"}`, wantCode: 400, wantDetail: "invalid network type"},
		{name: "bad range", method: "PUT", path: "/v1/networks/X", body: `{"Type":"ethernet","IPRanges":["10.0.0.0"]}`, wantCode: 400, wantDetail: "invalid IP Range: 10.0.0.0"},
		{name: "bad extra field", method: "PUT", path: "/v1/networks/X", body: `{"Type":"ethernet","ExtraProperties":{"MTU":"big"}}`, wantCode: 400, wantDetail: "ExtraProperties.MTU"},
		{name: "bad subnet field", method: "PUT", path: "/v1/networks/X", body: `{"Type":"ethernet","ExtraProperties":{"Subnets":[{"VlanID":"4"}]}}`, wantCode: 400, wantDetail: "ExtraProperties.Subnets.VlanID"},
		{name: "NUL in name", method: "POST", path: "/v1/networks", body: `{"Name":"HM\u0000N","Type":"ethernet"}`, wantCode: 400, wantDetail: "control character"},
		{name: "bidi control in name", method: "POST", path: "/v1/networks", body: "{\"Name\":\"HMN\u202e\",\"Type\":\"ethernet\"}", wantCode: 400, wantDetail: "control character U+202E"},
		{name: "invalid UTF-8 in extra", method: "PUT", path: "/v1/networks/X", body: "{\"Type\":\"ethernet\",\"ExtraProperties\":{\"Owner\":\"\xff\"}}", wantCode: 400, wantDetail: "Failed to unmarshal body"},
		{name: "duplicate key in extra", method: "PUT", path: "/v1/networks/X", body: `{"Type":"ethernet","ExtraProperties":{"MTU":1,"MTU":2}}`, wantCode: 400, wantDetail: "Failed to unmarshal body"},
		{name: "patch duplicate key", method: "PATCH", path: "/v1/networks/HMN", body: `{"FullName":"a","FullName":"b"}`, wantCode: 400, wantDetail: `duplicate key "FullName"`},
		{name: "missing name", method: "POST", path: "/v1/networks", body: `{"Type":"ethernet"}`, wantCode: 400, wantDetail: "invalid network name"},
		{name: "patch", method: "PATCH", path: "/v1/networks/HMN", body: `{"FullName":"HMN (patched)","ExtraProperties":{"MTU":1500,"Owner":null}}`, wantCode: 200},
		{name: "patch rename", method: "PATCH", path: "/v1/networks/HMN", body: `{"Name":"HMN2"}`, wantCode: 400, wantDetail: "does not match"},
		{name: "patch not an object", method: "PATCH", path: "/v1/networks/HMN", body: `[1]`, wantCode: 400, wantDetail: "merge patch"},
		{name: "patch missing", method: "PATCH", path: "/v1/networks/CAN", body: `{}`, wantCode: 404},
		{name: "get missing", method: "GET", path: "/v1/networks/CAN", wantCode: 404, wantDetail: "Network not found in DB"},
		{name: "delete", method: "DELETE", path: "/v1/networks/NMN", wantCode: 200},
		{name: "delete again", method: "DELETE", path: "/v1/networks/NMN", wantCode: 404},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			code, body := e.do(s.method, s.path, s.body)
			if code != s.wantCode {
				t.Fatalf("%s %s = %d %s, want %d", s.method, s.path, code, body, s.wantCode)
			}
			if code >= 400 && !strings.Contains(detail(t, body), s.wantDetail) {
				t.Errorf("detail %q, want it to contain %q", detail(t, body), s.wantDetail)
			}
		})
	}
	_, body := e.do("GET", "/v1/networks", "")
	var got []Network
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	want := []Network{{
		Name: "HMN", FullName: "HMN (patched)", IPRanges: []string{"10.254.0.0/17"}, Type: "ethernet",
		LastUpdated: testNow.Unix(), LastUpdatedTime: "2026-03-04 05:06:07.123456 +0000 UTC",
		ExtraProperties: json.RawMessage(`{"CIDR":"10.254.0.0/17","MTU":1500,"Subnets":[{"CIDR":"10.254.0.0/17","Name":"bootstrap_dhcp","VlanID":4}],"VlanRange":[4]}`),
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("networks after the steps (-want +got):\n%s", diff)
	}
}

func TestSearchNetworks(t *testing.T) { pg.EachDB(t, testSearchNetworks) }

func testSearchNetworks(t *testing.T, db testpeer.DB) {
	e := newTestEnvOn(t, db(t))
	e.loadFile("river.json")
	tests := []struct {
		query      string
		wantCode   int
		want       []string
		wantDetail string
	}{
		{query: "", wantCode: 200, want: []string{"HMN", "NMN"}},
		{query: "name=HMN", wantCode: 200, want: []string{"HMN"}},
		{query: "full_name=Node+Management+Network", wantCode: 200, want: []string{"NMN"}},
		{query: "type=ETHERNET", wantCode: 200, want: []string{"HMN", "NMN"}},
		{query: "ip_address=10.252.1.4", wantCode: 200, want: []string{"NMN"}},
		{query: "extra_properties.MTU=9000", wantCode: 200, want: []string{"HMN", "NMN"}},
		{query: "extra_properties.VlanRange=4", wantCode: 200, want: []string{"HMN"}},
		{query: "ip_address=192.168.0.1", wantCode: 404},
		{query: "type=slingshot11", wantCode: 404},
		{query: "ip_address=300.1.1.1", wantCode: 400, wantDetail: "ip_address"},
		{query: "type=bogus", wantCode: 400, wantDetail: "query parameter Type"},
		{query: "vlan=4", wantCode: 400, wantDetail: `unknown query parameter "vlan"`},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			code, body := e.do("GET", "/v1/search/networks?"+tt.query, "")
			if code != tt.wantCode {
				t.Fatalf("search %q = %d %s, want %d", tt.query, code, body, tt.wantCode)
			}
			if code != http.StatusOK {
				if !strings.Contains(detail(t, body), tt.wantDetail) {
					t.Errorf("detail %q, want it to contain %q", detail(t, body), tt.wantDetail)
				}
				return
			}
			var nets []Network
			json.Unmarshal([]byte(body), &nets)
			var got []string
			for _, n := range nets {
				got = append(got, n.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHealthRoutes(t *testing.T) {
	e := newTestEnv(t)
	tests := []struct {
		path     string
		wantCode int
		wantBody string
	}{
		{path: "/v1/health", wantCode: 200, wantBody: `{"DBConnection":"Ready","Vault":"Not checked"}`},
		{path: "/v1/liveness", wantCode: 204},
		{path: "/v1/readiness", wantCode: 204},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			code, body := e.do("GET", tt.path, "")
			if code != tt.wantCode || strings.TrimSpace(body) != tt.wantBody {
				t.Errorf("GET %s = %d %q, want %d %q", tt.path, code, body, tt.wantCode, tt.wantBody)
			}
		})
	}
}
