package ethernet_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

// TestEthernetAddressesFollowTheirInterface: every interface read carries
// its own IP addresses and no other's, whether a few interfaces are read
// (their addresses read by key) or more than maxIPLookup (256: the address
// table read once).
func TestEthernetAddressesFollowTheirInterface(t *testing.T) {
	pg.EachDB(t, testEthernetAddressesFollowTheirInterface)
}

func testEthernetAddressesFollowTheirInterface(t *testing.T, db testpeer.DB) {
	a := hsmtest.NewServerOn(t, db)
	const n = 300
	mac := func(i int) string { return fmt.Sprintf("02:00:00:00:%02x:%02x", i>>8, i&0xff) }
	ip := func(i int) string { return fmt.Sprintf("10.1.%d.%d", i>>8, i&0xff) }
	ips := map[string]string{} // MAC -> its address
	for i := range n {
		ips[mac(i)] = ip(i)
		a.Must(201, "POST", "/Inventory/EthernetInterfaces", hsm.EthernetInterface{MACAddress: mac(i),
			ComponentID: fmt.Sprintf("x3000c0s%db0n0", i%3+1), IPAddresses: []hsm.IPAddressMapping{{IPAddress: ip(i)}}})
	}
	check := func(what string, list []hsm.EthernetInterface, want int) {
		t.Helper()
		if len(list) != want {
			t.Fatalf("%s: %d interfaces, want %d", what, len(list), want)
		}
		for _, ei := range list {
			if len(ei.IPAddresses) != 1 || ei.IPAddresses[0].IPAddress != ips[ei.MACAddress] {
				t.Errorf("%s: %s has %+v, want only %s", what, ei.MACAddress, ei.IPAddresses, ips[ei.MACAddress])
			}
		}
	}
	var all, some []hsm.EthernetInterface
	if err := json.Unmarshal(a.Must(200, "GET", "/Inventory/EthernetInterfaces", nil), &all); err != nil {
		t.Fatal(err)
	}
	check("all", all, n)
	if err := json.Unmarshal(a.Must(200, "GET", "/Inventory/EthernetInterfaces?ComponentID=x3000c0s2b0n0", nil), &some); err != nil {
		t.Fatal(err)
	}
	check("by component", some, n/3)
	var one hsm.EthernetInterface
	if err := json.Unmarshal(a.Must(200, "GET", "/Inventory/EthernetInterfaces/"+mac(257), nil), &one); err != nil {
		t.Fatal(err)
	}
	check("one", []hsm.EthernetInterface{one}, 1)
}
