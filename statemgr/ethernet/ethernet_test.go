package ethernet_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

func TestEthernetInterfacesAPI(t *testing.T) {
	a := hsmtest.NewServer(t)
	body := a.Must(201, "POST", "/Inventory/EthernetInterfaces", map[string]any{
		"MACAddress": "A4:BF:01:2B:73:10", "Description": "bmc", "ComponentID": "x3000c0s1b0",
		"IPAddresses": []map[string]any{{"IPAddress": "10.254.1.5", "Network": "HMN"}}})
	if got := string(body); got != `{"URI":"/hsm/v2/Inventory/EthernetInterfaces/a4bf012b7310"}`+"\n" { // one object, as shipped
		t.Errorf("POST body %s", got)
	}
	a.Problem(400, "GET", "/Inventory/EthernetInterfaces?ComponentID=BADID", nil, "Invalid CompID.")
	a.Must(201, "POST", "/Inventory/EthernetInterfaces", map[string]any{"MACAddress": "a4:bf:01:2b:73:11", "IPAddresses": []map[string]any{{"IPAddress": "10.252.0.9"}}})
	a.Must(409, "POST", "/Inventory/EthernetInterfaces", map[string]any{"MACAddress": "a4bf012b7310"})
	a.Must(400, "POST", "/Inventory/EthernetInterfaces", map[string]any{"MACAddress": "not-a-mac"})
	a.Must(400, "POST", "/Inventory/EthernetInterfaces", map[string]any{"MACAddress": "a4bf012b7312", "ComponentID": "bogus"})
	a.Must(400, "POST", "/Inventory/EthernetInterfaces", map[string]any{"MACAddress": "a4bf012b7312", "IPAddresses": []map[string]any{{"IPAddress": "10.1"}}})

	get := func(q string) []string {
		var l []hsm.EthernetInterface
		json.Unmarshal(a.Must(200, "GET", "/Inventory/EthernetInterfaces"+q, nil), &l)
		out := []string{}
		for _, e := range l {
			out = append(out, e.ID)
		}
		return out
	}
	tests := []struct {
		q    string
		want []string
	}{
		{q: "", want: []string{"a4bf012b7310", "a4bf012b7311"}},
		{q: "?ComponentID=x3000c0s1b0", want: []string{"a4bf012b7310"}},
		{q: "?ComponentID=", want: []string{"a4bf012b7311"}},
		{q: "?Type=NodeBMC", want: []string{"a4bf012b7310"}},
		{q: "?MACAddress=a4:bf:01:2b:73:11", want: []string{"a4bf012b7311"}},
		{q: "?IPAddress=10.254.1.5", want: []string{"a4bf012b7310"}},
		{q: "?Network=HMN&Network=NMN", want: []string{"a4bf012b7310"}},
		{q: "?NewerThan=2000-01-01T00:00:00Z", want: []string{"a4bf012b7310", "a4bf012b7311"}},
		{q: "?OlderThan=2000-01-01T00:00:00Z", want: []string{}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, get(tc.q)); diff != "" {
			t.Errorf("GET %s (-want +got):\n%s", tc.q, diff)
		}
	}
	a.Must(400, "GET", "/Inventory/EthernetInterfaces?OlderThan=yesterday", nil)
	a.Must(200, "GET", "/Inventory/EthernetInterfaces?Colour=red", nil) // unknown parameters are ignored, as shipped HSM does

	var ei hsm.EthernetInterface
	json.Unmarshal(a.Must(200, "PATCH", "/Inventory/EthernetInterfaces/a4bf012b7311", map[string]any{"ComponentID": "x3000c0s2b0n0", "Description": "node"}), &ei)
	want := hsm.EthernetInterface{ID: "a4bf012b7311", Description: "node", MACAddress: "a4:bf:01:2b:73:11",
		IPAddresses: []hsm.IPAddressMapping{{IPAddress: "10.252.0.9"}}, ComponentID: "x3000c0s2b0n0", Type: "Node"}
	if diff := cmp.Diff(want, ei, cmpopts.IgnoreFields(hsm.EthernetInterface{}, "LastUpdate")); diff != "" || time.Since(ei.LastUpdate) > time.Hour {
		t.Errorf("PATCH (-want +got):\n%s", diff)
	}
	a.Must(201, "POST", "/Inventory/EthernetInterfaces/a4bf012b7311/IPAddresses", map[string]any{"IPAddress": "10.100.0.2", "Network": "CAN"})
	a.Must(409, "POST", "/Inventory/EthernetInterfaces/a4bf012b7311/IPAddresses", map[string]any{"IPAddress": "10.100.0.2"})
	a.Must(200, "PATCH", "/Inventory/EthernetInterfaces/a4bf012b7311/IPAddresses/10.252.0.9", map[string]any{"Network": "NMN"})
	var ips []hsm.IPAddressMapping
	json.Unmarshal(a.Must(200, "GET", "/Inventory/EthernetInterfaces/a4bf012b7311/IPAddresses", nil), &ips)
	if diff := cmp.Diff([]hsm.IPAddressMapping{{IPAddress: "10.100.0.2", Network: "CAN"}, {IPAddress: "10.252.0.9", Network: "NMN"}}, ips); diff != "" {
		t.Errorf("IPAddresses (-want +got):\n%s", diff)
	}
	a.Must(200, "DELETE", "/Inventory/EthernetInterfaces/a4bf012b7311/IPAddresses/10.100.0.2", nil)
	a.Must(404, "DELETE", "/Inventory/EthernetInterfaces/a4bf012b7311/IPAddresses/10.100.0.2", nil)
	a.Must(404, "PATCH", "/Inventory/EthernetInterfaces/a4bf012b7399", map[string]any{})
	a.Must(200, "DELETE", "/Inventory/EthernetInterfaces/a4bf012b7310", nil)
	a.Must(404, "GET", "/Inventory/EthernetInterfaces/a4bf012b7310", nil)
	a.Must(200, "DELETE", "/Inventory/EthernetInterfaces", nil)
	a.Must(404, "DELETE", "/Inventory/EthernetInterfaces", nil)
}
