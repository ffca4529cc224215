package inventory

import (
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/testpeer"
)

// TestRFEndpointShippedWire pins the shipped HSM's RedfishEndpoint body
// (Password always present and empty, empty Name, UseSSDP, MACRequired and
// TemplateID left out) and its answers to a Hostname/Domain that contradicts
// the FQDN, a second endpoint on one FQDN, a PUT of a missing endpoint and a
// bad ?id=.
func TestRFEndpointShippedWire(t *testing.T) { pg.EachDB(t, testRFEndpointShippedWire) }

func testRFEndpointShippedWire(t *testing.T, db testpeer.DB) {
	e := newRFEnvOn(t, db, DiscoveryConfig{})
	const ep = "/Inventory/RedfishEndpoints"
	e.Must(201, "POST", ep, map[string]any{"ID": "x3000c0s1b0", "FQDN": "bmc1.hmn", "User": "root", "Password": "secret"})
	e.Exact(200, "GET", ep+"/x3000c0s1b0", nil, `{"ID":"x3000c0s1b0","Type":"NodeBMC","Hostname":"bmc1","Domain":"","FQDN":"bmc1.hmn",`+
		`"Enabled":true,"UUID":"","User":"root","Password":"","MACAddr":"","IPAddress":"","RediscoverOnUpdate":false,`+
		`"DiscoveryInfo":{"LastDiscoveryStatus":"NotYetQueried"}}`+"\n")
	e.Must(201, "POST", ep, map[string]any{"ID": "x3000c0s2b0", "FQDN": "bmc2.hmn", "Name": "two", "UseSSDP": true,
		"MacRequired": true, "TemplateID": "t1"})
	got := string(e.Must(200, "GET", ep+"/x3000c0s2b0", nil))
	for _, want := range []string{`"Name":"two"`, `"UseSSDP":true`, `"MACRequired":true`, `"TemplateID":"t1"`} {
		if !strings.Contains(got, want) {
			t.Errorf("GET x3000c0s2b0: %s lacks %s", got, want)
		}
	}

	e.Problem(400, "POST", ep, map[string]any{"ID": "x3000c0s3b0", "FQDN": "bmc3.hmn", "Hostname": "other"},
		"host/domain conflicts with FQDN: 'other' != 'bmc3.hmn'")
	e.Problem(400, "POST", ep, map[string]any{"ID": "x3000c0s3b0", "FQDN": "bmc3.hmn", "Hostname": "bmc3", "Domain": "nmn"},
		"host/domain conflicts with FQDN: 'bmc3.nmn' != 'bmc3.hmn'")
	e.Must(201, "POST", ep, map[string]any{"ID": "x3000c0s3b0", "FQDN": "bmc3.hmn", "Hostname": "bmc3", "Domain": "hmn"})

	const dup = "operation would conflict with an existing resource that has the same FQDN"
	e.Problem(409, "PATCH", ep+"/x3000c0s2b0", map[string]any{"FQDN": "bmc1.hmn"}, dup)
	e.Problem(409, "POST", ep, map[string]any{"ID": "x3000c0s4b0", "FQDN": "bmc1.hmn"}, dup)
	e.Must(200, "PATCH", ep+"/x3000c0s2b0", map[string]any{"FQDN": "bmc22.hmn"}) // Hostname follows the FQDN
	e.Problem(404, "PUT", ep+"/x3000c0s9b0", map[string]any{"FQDN": "bmc9"}, "No such entry: x3000c0s9b0")
	e.Problem(400, "GET", ep+"?id=bogus", nil, "bad query param: Argument was not a valid xname ID")
}

// TestDiscoveryStatusIDs: a DiscoveryStatus ID that is not an unsigned
// integer is 400, an unknown one 404, with the shipped HSM's words.
func TestDiscoveryStatusIDs(t *testing.T) { pg.EachDB(t, testDiscoveryStatusIDs) }

func testDiscoveryStatusIDs(t *testing.T, db testpeer.DB) {
	e := newRFEnvOn(t, db, DiscoveryConfig{})
	e.Must(200, "GET", "/Inventory/DiscoveryStatus/0", nil)
	e.Problem(400, "GET", "/Inventory/DiscoveryStatus/abc", nil, "DiscoveryStatus ID not an unsigned integer")
	e.Problem(400, "GET", "/Inventory/DiscoveryStatus/-1", nil, "DiscoveryStatus ID not an unsigned integer")
	e.Problem(404, "GET", "/Inventory/DiscoveryStatus/7", nil, "no such DiscoveryStatus ID.")
}

// TestDiscoveryStatusBody: the status carries ID, Status and
// LastUpdateTime, and no Details, as the shipped HSM sends it.
func TestDiscoveryStatusBody(t *testing.T) { pg.EachDB(t, testDiscoveryStatusBody) }

func testDiscoveryStatusBody(t *testing.T, db testpeer.DB) {
	e := newRFEnvOn(t, db, DiscoveryConfig{})
	got := string(e.Must(200, "GET", "/Inventory/DiscoveryStatus/0", nil))
	if !strings.HasPrefix(got, `{"ID":0,"Status":"NotStarted","LastUpdateTime":"`) || strings.Contains(got, "Details") {
		t.Errorf("DiscoveryStatus/0: %s", got)
	}
}
