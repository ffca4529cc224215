package inventory

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/internal/testpeer"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/statemgr/hsm"
)

func TestRFEndpointsAPI(t *testing.T) { pg.EachDB(t, testRFEndpointsAPI) }

func testRFEndpointsAPI(t *testing.T, db testpeer.DB) {
	e := newRFEnvOn(t, db, DiscoveryConfig{})
	e.Must(201, "POST", "/Inventory/RedfishEndpoints", hsm.RedfishEndpoint{ID: "x3000c0s1b0", FQDN: "10.1.2.3:8443",
		User: "root", Password: rfPassword, MACAddr: "AA-BB-CC-DD-EE-01"})
	e.Must(201, "POST", "/Inventory/RedfishEndpoints", map[string]any{"RedfishEndpoints": []hsm.RedfishEndpoint{
		{ID: "x3000c0s2b0", IPAddress: "10.1.2.4", User: "admin", Password: rfPassword},
		{ID: "x3000c0r1b0", Hostname: "sw1", Domain: "hmn"},
	}})

	got := e.endpoint("x3000c0s1b0")
	on := true
	want := hsm.RedfishEndpoint{ID: "x3000c0s1b0", Type: "NodeBMC", Hostname: "x3000c0s1b0", FQDN: "10.1.2.3:8443", Enabled: &on,
		User: "root", MACAddr: "aa:bb:cc:dd:ee:01", DiscoveryInfo: hsm.DiscoveryInfo{LastDiscoveryStatus: "NotYetQueried"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GET (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name, query string
		want        []string
	}{
		{name: "all", want: []string{"x3000c0r1b0", "x3000c0s1b0", "x3000c0s2b0"}},
		{name: "id", query: "?id=x3000c0s2b0", want: []string{"x3000c0s2b0"}},
		{name: "type", query: "?type=RouterBMC", want: []string{"x3000c0r1b0"}},
		{name: "fqdn", query: "?fqdn=sw1.hmn", want: []string{"x3000c0r1b0"}},
		{name: "macaddr", query: "?macaddr=AA:BB:CC:DD:EE:01", want: []string{"x3000c0s1b0"}},
		{name: "ipaddress", query: "?ipaddress=10.1.2.4", want: []string{"x3000c0s2b0"}},
		{name: "laststatus", query: "?laststatus=NotYetQueried&type=NodeBMC", want: []string{"x3000c0s1b0", "x3000c0s2b0"}},
	} {
		t.Run("filter "+tc.name, func(t *testing.T) {
			var l hsm.RedfishEndpointList
			if err := json.Unmarshal(e.Must(200, "GET", "/Inventory/RedfishEndpoints"+tc.query, nil), &l); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, ep := range l.RedfishEndpoints {
				ids = append(ids, ep.ID)
				if ep.Password != "" {
					t.Errorf("%s: Password returned", ep.ID)
				}
			}
			if diff := cmp.Diff(tc.want, ids); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		detail             string
	}{
		{"duplicate", "POST", "", hsm.RedfishEndpoint{ID: "x3000c0s1b0"}, 409, "already exists"},
		{"not a controller", "POST", "", hsm.RedfishEndpoint{ID: "x3000c0s1b0n0"}, 400, "ID"},
		{"type mismatch", "POST", "", hsm.RedfishEndpoint{ID: "x3000c0s9b0", Type: "ChassisBMC"}, 400, "Type"},
		{"bad mac", "POST", "", hsm.RedfishEndpoint{ID: "x3000c0s9b0", MACAddr: "zz"}, 400, "MACAddr"},
		{"bad ip", "POST", "", hsm.RedfishEndpoint{ID: "x3000c0s9b0", IPAddress: "10.1.1"}, 400, "IPAddress"},
		{"bad bulk element", "POST", "", map[string]any{"RedfishEndpoints": []hsm.RedfishEndpoint{{ID: "x3000c0s9b0"}, {ID: "bogus"}}}, 400, "RedfishEndpoints[1].ID"},
		{"unknown filter ignored, as shipped", "GET", "?color=red", nil, 200, "RedfishEndpoints"},
		{"missing", "GET", "/x3000c0s9b0", nil, 404, "x3000c0s9b0"},
		{"patch missing", "PATCH", "/x3000c0s9b0", map[string]any{"Enabled": false}, 404, "x3000c0s9b0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, body := e.Do(tc.method, "/Inventory/RedfishEndpoints"+tc.path, tc.body)
			if st != tc.status || !strings.Contains(string(body), tc.detail) {
				t.Errorf("status %d body %s; want %d mentioning %q", st, body, tc.status, tc.detail)
			}
			if strings.Contains(string(body), rfPassword) {
				t.Errorf("response carries the password: %s", body)
			}
		})
	}
	if _, err := e.store.rfEndpointRow(t.Context(), "x3000c0s9b0"); err == nil {
		t.Error("a rejected bulk POST stored x3000c0s9b0")
	}

	// PATCH and a GET-modify-PUT round trip keep the password.
	e.Must(200, "PATCH", "/Inventory/RedfishEndpoints/x3000c0s1b0", map[string]any{"Name": "n1", "User": "admin"})
	put := e.endpoint("x3000c0s1b0")
	put.Name = "n2"
	e.Must(200, "PUT", "/Inventory/RedfishEndpoints/x3000c0s1b0", put)
	row, err := e.store.rfEndpointRow(t.Context(), "x3000c0s1b0")
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.disc.openCred(row)
	if err != nil {
		t.Fatal(err)
	}
	if c != (rfCred{User: "admin", Password: rfPassword}) || row.ep.Name != "n2" {
		t.Errorf("after PATCH and PUT: name %q, creds user %q password kept %v", row.ep.Name, c.User, c.Password == rfPassword)
	}
	e.Must(404, "PUT", "/Inventory/RedfishEndpoints/x3000c0s8b0", hsm.RedfishEndpoint{FQDN: "bmc8"}) // PUT replaces, never creates
	e.Must(201, "POST", "/Inventory/RedfishEndpoints", hsm.RedfishEndpoint{ID: "x3000c0s8b0", FQDN: "bmc8"})

	var q hsm.RedfishEndpointList
	_ = json.Unmarshal(e.Must(200, "GET", "/Inventory/RedfishEndpoints/Query/x3000c0", nil), &q)
	if len(q.RedfishEndpoints) != 4 {
		t.Errorf("Query/x3000c0: %d endpoints, want 4", len(q.RedfishEndpoints))
	}

	// The database never holds the password in clear.
	checkNoPlaintext(t, e)

	e.Must(200, "DELETE", "/Inventory/RedfishEndpoints/x3000c0s1b0", nil)
	e.Must(404, "DELETE", "/Inventory/RedfishEndpoints/x3000c0s1b0", nil)
	e.Must(200, "DELETE", "/Inventory/RedfishEndpoints", nil)
	e.Must(404, "DELETE", "/Inventory/RedfishEndpoints", nil)
}

func TestLoadCredKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k")
	c1, err := LoadCredKey(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 || st.Size() != credKeySize {
		t.Fatalf("key file: %v %v; want mode 0600, %d bytes", st.Mode(), err, credKeySize)
	}
	sealed, err := c1.seal("x1c0s0b0", []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	c2, err := LoadCredKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c2.open("x1c0s0b0", sealed); err != nil || string(got) != "pw" {
		t.Errorf("reloaded key opens %q, %v", got, err)
	}
	if _, err := c2.open("x1c0s1b0", sealed); err == nil {
		t.Error("a value sealed for one endpoint opened for another")
	}
	for _, tc := range []struct {
		name   string
		data   []byte
		mode   os.FileMode
		errHas string
	}{
		{"world readable", make([]byte, credKeySize), 0o644, "0644"},
		{"short", make([]byte, 16), 0o600, "16 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name)
			if err := os.WriteFile(p, tc.data, tc.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, tc.mode); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadCredKey(p); err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("err = %v, want one mentioning %q", err, tc.errHas)
			}
		})
	}
}

// checkNoPlaintext fails t if e's database holds rfPassword in clear: in
// the SQLite file or its WAL, or in a row of rf_endpoints on PostgreSQL.
func checkNoPlaintext(t *testing.T, e *rfEnv) {
	t.Helper()
	if !sqldb.IsPostgres(e.dbPath) {
		for _, suffix := range []string{"", "-wal"} {
			b, err := os.ReadFile(e.dbPath + suffix)
			if err != nil && suffix == "" {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(rfPassword)) {
				t.Errorf("%s contains the plaintext password", filepath.Base(e.dbPath+suffix))
			}
		}
		return
	}
	rows, err := coreOf(e.store).DB.R.QueryContext(t.Context(), `SELECT r::text FROM rf_endpoints r`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var row string
		if err := rows.Scan(&row); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(row, rfPassword) {
			t.Errorf("an rf_endpoints row contains the plaintext password")
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}
