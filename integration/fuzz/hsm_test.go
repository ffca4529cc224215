package fuzz

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/hmsuite/hms/statemgr"
	"github.com/hmsuite/hms/statemgr/inventory"
)

const hsmBase = "/hsm/v2"

// hsmDumps are the GETs that together show everything HSM stores.
var hsmDumps = []string{
	hsmBase + "/State/Components",
	hsmBase + "/Inventory/Hardware",
	hsmBase + "/Inventory/HardwareByFRU",
	hsmBase + "/Inventory/Hardware/History",
	hsmBase + "/Inventory/RedfishEndpoints",
	hsmBase + "/Inventory/ComponentEndpoints",
	hsmBase + "/Inventory/ServiceEndpoints",
	hsmBase + "/Inventory/EthernetInterfaces",
	hsmBase + "/Defaults/NodeMaps",
	hsmBase + "/groups",
	hsmBase + "/partitions",
	hsmBase + "/memberships",
	hsmBase + "/locks/status",
	hsmBase + "/Subscriptions/SCN",
}

// startHSM starts an hsm through its public entry point, as cmd/hsm does,
// with BMC walks confined to loopback and the reservation reaper idle (so
// nothing changes between two dumps), and returns it as a target; setup
// requests follow.
func startHSM(f *testing.F, setup ...[3]string) *target {
	f.Helper()
	dir := f.TempDir()
	d, err := statemgr.StartDaemon(f.Context(), statemgr.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "hsm.db"),
		CredKeyFile: filepath.Join(dir, "cred.key"), Reap: 24 * time.Hour,
		Discovery: inventory.DiscoveryConfig{HTTPClient: loopbackOnly(), Timeout: 2 * time.Second}})
	if err != nil {
		f.Fatal(err)
	}
	run(f, d)
	tg := &target{base: d.URL(), client: newClient(), dumps: hsmDumps}
	tg.settle = func(t *testing.T) { hsmSettle(t, tg) }
	for _, s := range setup {
		tg.mustDo(f, s[0], hsmBase+s[1], s[2], 0)
	}
	return tg
}

// hsmSettle waits until HSM's discovery queue is empty: a walk an earlier
// request started records its outcome on the RedfishEndpoint when it ends.
// The walks go nowhere (loopbackOnly), so this takes a few round trips.
func hsmSettle(t *testing.T, tg *target) {
	t.Helper()
	for range 100000 {
		_, out := tg.do(t, "GET", hsmBase+"/Inventory/DiscoveryStatus/0", "", "", nil)
		var st inventory.DiscoveryStatus
		if json.Unmarshal([]byte(out), &st) == nil && (st.Status == inventory.DiscoveryComplete || st.Status == inventory.DiscoveryNotStarted) {
			return
		}
	}
	t.Fatal("HSM discovery never settled")
}

// hsmComponents is the setup most HSM targets share: two nodes and a BMC.
var hsmComponents = [3]string{"POST", "/State/Components",
	`{"Components":[{"ID":"x0c0s0b0n0","Type":"Node","State":"Ready","Role":"Compute","NID":1},{"ID":"x0c0s0b0n1","Type":"Node","State":"On","NID":2},{"ID":"x0c0s0b0","Type":"NodeBMC","State":"Ready"}]}`}

func FuzzHSMComponents(f *testing.F) {
	tg := startHSM(f, hsmComponents)
	c := hsmBase + "/State/Components"
	routes := []route{
		{method: "POST", path: c}, {method: "DELETE", path: c},
		{method: "PUT", path: c + "/{}"}, {method: "DELETE", path: c + "/{}"},
		{method: "PATCH", path: c + "/{}/StateData"}, {method: "PATCH", path: c + "/BulkStateData"},
		{method: "PATCH", path: c + "/{}/FlagOnly"}, {method: "PATCH", path: c + "/BulkFlagOnly"},
		{method: "PATCH", path: c + "/{}/Enabled"}, {method: "PATCH", path: c + "/BulkEnabled"},
		{method: "PATCH", path: c + "/{}/SoftwareStatus"}, {method: "PATCH", path: c + "/BulkSoftwareStatus"},
		{method: "PATCH", path: c + "/{}/Role"}, {method: "PATCH", path: c + "/BulkRole"},
		{method: "PATCH", path: c + "/{}/NID"}, {method: "PATCH", path: c + "/BulkNID"},
	}
	seeds := []seed{
		{route: "POST " + c, body: `{"Components":[{"ID":"x0c0s1b0n0","Type":"Node","Role":"Service","SubRole":"Master"}]}`},
		{route: "POST " + c, body: `{"Components":[{"ID":"p9999.9996","State":"Ready"}]}`},
		{route: "POST " + c, body: `{"Components":[{"ID":"x0c0s1b0n1","Type":"Node","State":"Ready","Flag":"Warning","Enabled":false,"Role":"Compute","NID":4}],"Force":true}`},
		{route: "POST " + c, body: `{"Components":[{"ID":"x0c0s0b0n0","State":"Ready"},{"ID":"x0c0s0b0n0","State":"Off"}]}`},
		{route: "POST " + c, body: `{"Components":[{"ID":"x0c0s0b0n0","State":"Ready","state":"Off"}]}`},
		{route: "POST " + c, body: `{"Components":[{"ID":"x0c0s0b0n0","NID":1,"NID":2}]}`},
		{route: "POST " + c, body: `{"Components":[{"ID":"x0c0s9b0n0","Type":"Node","State":"Ready"},{"ID":"bogus","State":"Ready"}]}`},
		{route: "PUT " + c + "/{}", param: "x0c0s2b0n0", body: `{"Component":{"ID":"x0c0s2b0n0","Type":"Node","State":"Ready"}}`},
		{route: "PUT " + c + "/{}", param: "x0c0s2b0n0", body: `{"Component":{"ID":"x0c0s3b0n0","Type":"Node","State":"Ready"}}`},
		{route: "DELETE " + c + "/{}", param: "x9c0s0b0n0"},
		{route: "PATCH " + c + "/{}/StateData", param: "x0c0s0b0n0", body: `{"State":"Off"}`},
		{route: "PATCH " + c + "/{}/StateData", param: "x0c0s0b0n0", body: `{"State":"sleepy"}`},
		{route: "PATCH " + c + "/{}/StateData", param: "x0c0s0b0n0", body: `{"State":"Ready","Flag":"OK","Force":"yes"}`},
		{route: "PATCH " + c + "/BulkStateData", body: `{"ComponentIDs":["x0c0s0b0n0","x0c0s0b0n1"],"State":"Ready"}`},
		{route: "PATCH " + c + "/BulkStateData", body: `{"ComponentIDs":["x0c0s0b0n0","x7c0s0b0n0"],"State":"Off"}`},
		{route: "PATCH " + c + "/BulkStateData", body: `{"ComponentIDs":["x0c0s0b0n0","n1"],"State":"Off"}`},
		{route: "PATCH " + c + "/{}/FlagOnly", param: "x0c0s0b0n1", body: `{"Flag":"Alert"}`},
		{route: "PATCH " + c + "/BulkFlagOnly", body: `{"ComponentIDs":["x0c0s0b0n1"],"Flag":"Bogus"}`},
		{route: "PATCH " + c + "/{}/Enabled", param: "x0c0s0b0n1", body: `{"Enabled":false}`},
		{route: "PATCH " + c + "/BulkEnabled", body: `{"ComponentIDs":["x0c0s0b0n1"],"Enabled":"no"}`},
		{route: "PATCH " + c + "/{}/SoftwareStatus", param: "x0c0s0b0n1", body: `{"SoftwareStatus":"AdminDown"}`},
		{route: "PATCH " + c + "/BulkSoftwareStatus", body: `{"ComponentIDs":["x0c0s0b0n1"],"SoftwareStatus":"x\u0000"}`},
		{route: "PATCH " + c + "/{}/Role", param: "x0c0s0b0n1", body: `{"Role":"Application","SubRole":"UAN"}`},
		{route: "PATCH " + c + "/BulkRole", body: `{"ComponentIDs":["x0c0s0b0n1"],"Role":"Nope"}`},
		{route: "PATCH " + c + "/{}/NID", param: "x0c0s0b0n1", body: `{"NID":20}`},
		{route: "PATCH " + c + "/{}/NID", param: "x0c0s0b0n1", body: `{"NID":1}`},
		{route: "PATCH " + c + "/BulkNID", body: `{"Components":[{"ID":"x0c0s0b0n0","NID":7},{"ID":"x0c0s0b0n1","NID":7}]}`},
		{route: "PATCH " + c + "/BulkNID", body: `{"Components":[{"ID":"x0c0s0b0n0","NID":8},{"ID":"x9c0s0b0n1","NID":9}]}`},
		{route: "DELETE " + c, query: "type=Node"},
	}
	seeds = withHostile(seeds, "x0c0s0b0n0", "POST "+c, "PATCH "+c+"/{}/StateData", "PATCH "+c+"/BulkStateData", "PATCH "+c+"/BulkNID")
	fuzzRoutes(f, tg, routes, seeds)
}

func FuzzHSMComponentReads(f *testing.F) {
	tg := startHSM(f, hsmComponents)
	c := hsmBase + "/State/Components"
	routes := []route{
		{method: "GET", path: c, readOnly: true}, {method: "GET", path: c + "/{}", readOnly: true},
		{method: "GET", path: c + "/ByNID/{}", readOnly: true}, {method: "GET", path: c + "/Query/{}", readOnly: true},
		{method: "POST", path: c + "/Query", readOnly: true}, {method: "POST", path: c + "/ByNID/Query", readOnly: true},
		{method: "GET", path: hsmBase + "/service/values/{}", readOnly: true},
		{method: "GET", path: hsmBase + "/Inventory/DiscoveryStatus/{}", readOnly: true},
	}
	var seeds []seed
	for _, q := range []string{"", "type=Node&state=Ready", "role=compute&subrole=worker", "nid=1&nid=2", "nid_start=1&nid_end=10",
		"flag=OK&enabled=true", "id=x0c0s0b0n0&id=x0c0s0b0n1", "state=!Off", "type=bogus", "nid=one", "stateonly=true",
		"partition=p1", "group=blue", "softwarestatus=x%00", "%zz=1", "arch=X86&class=River&netType=Sling"} {
		seeds = append(seeds, seed{route: "GET " + c, query: q}, seed{route: "GET " + c + "/Query/{}", param: "x0c0s0b0", query: q})
	}
	seeds = append(seeds,
		seed{route: "GET " + c + "/{}", param: "x0c0s0b0n0"}, seed{route: "GET " + c + "/{}", param: "x0c0s0b0n0\u202e"},
		seed{route: "GET " + c + "/ByNID/{}", param: "1"}, seed{route: "GET " + c + "/ByNID/{}", param: "-1"},
		seed{route: "GET " + c + "/ByNID/{}", param: "99999999999999999999"},
		seed{route: "POST " + c + "/Query", body: `{"ComponentIDs":["x0c0s0b0n0","x0c0s0b0"],"type":["Node"]}`},
		seed{route: "POST " + c + "/Query", body: `{"ComponentIDs":["x0c0s0b0n0"],"componentids":["x0c0s0b0"]}`},
		seed{route: "POST " + c + "/ByNID/Query", body: `{"NIDRanges":["1-2","4"],"role":["Compute"]}`},
		seed{route: "POST " + c + "/ByNID/Query", body: `{"NIDRanges":["2-1","x"]}`},
		seed{route: "GET " + hsmBase + "/service/values/{}", param: "role"},
		seed{route: "GET " + hsmBase + "/Inventory/DiscoveryStatus/{}", param: "-0"})
	fuzzRoutes(f, tg, routes, withHostile(seeds, "", "POST "+c+"/Query", "POST "+c+"/ByNID/Query"))
}

func FuzzHSMInventory(f *testing.F) {
	tg := startHSM(f, hsmComponents)
	h, fru := hsmBase+"/Inventory/Hardware", hsmBase+"/Inventory/HardwareByFRU"
	routes := []route{
		{method: "POST", path: h}, {method: "DELETE", path: h}, {method: "DELETE", path: h + "/{}"},
		{method: "GET", path: h, readOnly: true}, {method: "GET", path: h + "/{}", readOnly: true},
		{method: "GET", path: h + "/Query/{}", readOnly: true}, {method: "GET", path: h + "/History", readOnly: true},
		{method: "DELETE", path: h + "/History/{}"}, {method: "GET", path: fru, readOnly: true},
		{method: "DELETE", path: fru + "/{}"}, {method: "GET", path: fru + "/History/{}", readOnly: true},
	}
	node := `{"Hardware":[{"ID":"x0c0s0b0n0","Type":"Node","Ordinal":0,"Status":"Populated","NodeLocationInfo":{"Id":"Node0"},"PopulatedFRU":{"FRUID":"NODE-1","Type":"Node","NodeFRUInfo":{"SerialNumber":"S1","Manufacturer":"Cray"}}}]}`
	seeds := []seed{
		{route: "POST " + h, body: node},
		{route: "POST " + h, body: `{"Hardware":[{"ID":"x0c0s0b0n0p0","ProcessorLocationInfo":{},"PopulatedFRU":{"ProcessorFRUInfo":{"SerialNumber":"NEW"}}}]}`},
		{route: "POST " + h, body: `{"Hardware":[{"ID":"x3000c0s1b0n0","NodeLocationInfo":"n0"}]}`},
		{route: "POST " + h, body: `{"Hardware":[{"ID":"x3000c0s1b0n0","NodeLocationInfo":{},"HWInventoryByLocationType":"HWInvByLocMemory"}]}`},
		{route: "POST " + h, body: `{"Hardware":[{"ID":"x3000c0s1b0n0","NodeLocationInfo":{},"Ordinal":-1}]}`},
		{route: "POST " + h, body: `{"Hardware":[{"ID":"x3000c0s1b0n0","NodeLocationInfo":{},"PopulatedFRU":{"NodeFRUInfo":{"SerialNumber":5}}}]}`},
		{route: "POST " + h, body: `{"Hardware":[{"ID":"x3000c0s1b0n0","NodeLocationInfo":{},"Status":"Gone"}]}`},
		{route: "POST " + h, body: `{"Hardware":[{"ID":7}]}`},
		{route: "POST " + h, body: `{"Hardware":[{"ID":"x0c0s0b0n1","NodeLocationInfo":{}},{"ID":"x0c0s0b0n1i0"}]}`},
		{route: "DELETE " + h + "/{}", param: "x9c0s0b0n0"},
		{route: "GET " + h, query: "type=Node&manufacturer=Cray&children=true"},
		{route: "GET " + h + "/Query/{}", param: "x0c0s0b0", query: "type=Processor&format=NestNodesOnly"},
		{route: "GET " + h + "/Query/{}", param: "s0", query: "tpye=Node"},
		{route: "GET " + h + "/History", query: "eventtype=Added&starttime=2020-01-01T00:00:00Z&endtime=bogus"},
		{route: "DELETE " + h + "/History/{}", param: "x9c0s0b0n0"},
		{route: "GET " + fru, query: "fruid=NODE-1&type=Node&serialnumber=S1"},
		{route: "DELETE " + fru + "/{}", param: "NODE-404"},
		{route: "GET " + fru + "/History/{}", param: "NODE-1"},
	}
	fuzzRoutes(f, tg, routes, withHostile(seeds, "", "POST "+h))
}

func FuzzHSMRedfishEndpoints(f *testing.F) {
	bmc := `{"RedfishEndpoints":[{"ID":"x0c0s0b0","FQDN":"127.0.0.1:1","User":"root","Password":"pw","Enabled":true,"RediscoverOnUpdate":false}]}`
	tg := startHSM(f, hsmComponents, [3]string{"POST", "/Inventory/RedfishEndpoints", bmc})
	e := hsmBase + "/Inventory/RedfishEndpoints"
	routes := []route{
		{method: "POST", path: e}, {method: "PUT", path: e + "/{}"}, {method: "PATCH", path: e + "/{}"},
		{method: "DELETE", path: e + "/{}"}, {method: "DELETE", path: e},
		{method: "GET", path: e, readOnly: true}, {method: "GET", path: e + "/{}", readOnly: true},
		{method: "GET", path: e + "/Query/{}", readOnly: true},
		{method: "POST", path: hsmBase + "/Inventory/Discover"},
		{method: "DELETE", path: hsmBase + "/Inventory/ComponentEndpoints/{}"},
		{method: "GET", path: hsmBase + "/Inventory/ComponentEndpoints", readOnly: true},
		{method: "GET", path: hsmBase + "/Inventory/ServiceEndpoints/{}", readOnly: true},
	}
	seeds := []seed{
		{route: "POST " + e, body: `{"RedfishEndpoints":[{"ID":"x0c0s1b0","FQDN":"127.0.0.1:1","MACAddr":"AA-BB-CC-DD-EE-01","RediscoverOnUpdate":true}]}`},
		{route: "POST " + e, body: `{"RedfishEndpoints":[{"ID":"x0c0s2b0","FQDN":"a b"}]}`},
		{route: "POST " + e, body: `{"RedfishEndpoints":[{"ID":"x3000c0r1b0","Hostname":"sw1","Domain":"hmn","IPAddress":"[fe80::1]:443"}]}`},
		{route: "POST " + e, body: bmc},
		{route: "PUT " + e + "/{}", param: "x0c0s0b0", body: `{"ID":"x0c0s0b0","FQDN":"127.0.0.2:1","RediscoverOnUpdate":true}`},
		{route: "PATCH " + e + "/{}", param: "x0c0s0b0", body: `{"FQDN":"127.0.0.3:1","RediscoverOnUpdate":true}`},
		{route: "PATCH " + e + "/{}", param: "x0c0s0b0", body: `{"FQDN":"127.0.0.4:1","FQDN":"evil.example:443"}`},
		{route: "PATCH " + e + "/{}", param: "x0c0s0b0", body: `{"FQDN":"127.0.0.4:1","fqdn":"evil.example:443"}`},
		{route: "PATCH " + e + "/{}", param: "x0c0s0b0", body: `{"Enabled":"yes"}`},
		{route: "PATCH " + e + "/{}", param: "x0c0s9b0", body: `{"User":"u"}`},
		{route: "DELETE " + e + "/{}", param: "x9c0s0b0"},
		{route: "GET " + e, query: "id=x0c0s0b0&fqdn=127.0.0.1:1&type=NodeBMC&laststatus=NotYetQueried"},
		{route: "GET " + e, query: "ipaddress=::1&macaddr=zz"},
		{route: "GET " + e + "/Query/{}", param: "s0"},
		{route: "POST " + hsmBase + "/Inventory/Discover", body: `{"xnames":["x0c0s0b0"],"force":true}`},
		{route: "POST " + hsmBase + "/Inventory/Discover", body: `{"xnames":["not-an-xname"]}`},
		{route: "POST " + hsmBase + "/Inventory/Discover", body: `{"xnames":["x0c0s0b0"],"Xnames":["x0c0s1b0"]}`},
		{route: "DELETE " + hsmBase + "/Inventory/ComponentEndpoints/{}", param: "x9c0s0b0n0"},
		{route: "GET " + hsmBase + "/Inventory/ComponentEndpoints", query: "redfish_ep=x0c0s0b0&type=Node"},
		{route: "GET " + hsmBase + "/Inventory/ServiceEndpoints/{}", param: "UpdateService", query: "redfish_ep=x0c0s0b0"},
	}
	fuzzRoutes(f, tg, routes, withHostile(seeds, "x0c0s0b0", "POST "+e, "PATCH "+e+"/{}", "PUT "+e+"/{}"))
}

func FuzzHSMEthernet(f *testing.F) {
	eth := `{"ID":"a4bf0138ee65","MACAddress":"a4:bf:01:38:ee:65","ComponentID":"x0c0s0b0n0","IPAddresses":[{"IPAddress":"10.252.0.5","Network":"NMN"}]}`
	tg := startHSM(f, hsmComponents)
	tg.mustDo(f, "POST", hsmBase+"/Inventory/EthernetInterfaces", eth, 0)
	e := hsmBase + "/Inventory/EthernetInterfaces"
	routes := []route{
		{method: "POST", path: e}, {method: "PATCH", path: e + "/{}"}, {method: "DELETE", path: e + "/{}"},
		{method: "GET", path: e, readOnly: true}, {method: "GET", path: e + "/{}", readOnly: true},
		{method: "POST", path: e + "/a4bf0138ee65/IPAddresses"}, {method: "PATCH", path: e + "/a4bf0138ee65/IPAddresses/{}"},
		{method: "DELETE", path: e + "/a4bf0138ee65/IPAddresses/{}"},
	}
	seeds := []seed{
		{route: "POST " + e, body: `{"MACAddress":"a4:bf:01:38:ee:66","ComponentID":"x0c0s0b0n1"}`},
		{route: "POST " + e, body: eth},
		{route: "POST " + e, body: `{"MACAddress":"zz"}`},
		{route: "PATCH " + e + "/{}", param: "a4bf0138ee65", body: `{"Description":"d","ComponentID":"x0c0s0b0n1","IPAddresses":[{"IPAddress":"10.252.0.6"}]}`},
		{route: "PATCH " + e + "/{}", param: "a4bf0138ee65", body: `{"ComponentID":"bogus"}`},
		{route: "PATCH " + e + "/{}", param: "a4bf0138ee65", body: `{"IPAddresses":[{"IPAddress":"10.252.0.7","IPAddress":"10.252.0.8"}]}`},
		{route: "DELETE " + e + "/{}", param: "000000000000"},
		{route: "GET " + e, query: "MACAddress=a4:bf:01:38:ee:65&IPAddress=10.252.0.5&Network=NMN&ComponentID=x0c0s0b0n0&Type=Node"},
		{route: "GET " + e, query: "ComponentID=x0c9&OlderThan=bogus&NewerThan=2020-01-01T00:00:00Z"},
		{route: "POST " + e + "/a4bf0138ee65/IPAddresses", body: `{"IPAddress":"10.252.0.9","Network":"HMN"}`},
		{route: "POST " + e + "/a4bf0138ee65/IPAddresses", body: `{"IPAddress":"not-ip"}`},
		{route: "PATCH " + e + "/a4bf0138ee65/IPAddresses/{}", param: "10.252.0.5", body: `{"Network":"HMN"}`},
		{route: "DELETE " + e + "/a4bf0138ee65/IPAddresses/{}", param: "10.9.9.9"},
	}
	fuzzRoutes(f, tg, routes, withHostile(seeds, "a4bf0138ee65", "POST "+e, "PATCH "+e+"/{}"))
}

func FuzzHSMGroups(f *testing.F) {
	tg := startHSM(f, hsmComponents,
		[3]string{"POST", "/groups", `{"label":"blue","description":"d","tags":["t1"],"members":{"ids":["x0c0s0b0n0"]}}`},
		[3]string{"POST", "/partitions", `{"name":"p1","description":"one","members":{"ids":["x0c0s0b0n1"]}}`})
	g, p := hsmBase+"/groups", hsmBase+"/partitions"
	routes := []route{
		{method: "POST", path: g}, {method: "PATCH", path: g + "/{}"}, {method: "DELETE", path: g + "/{}"},
		{method: "POST", path: g + "/blue/members"}, {method: "DELETE", path: g + "/blue/members/{}"},
		{method: "POST", path: p}, {method: "PATCH", path: p + "/{}"}, {method: "DELETE", path: p + "/{}"},
		{method: "POST", path: p + "/p1/members"}, {method: "DELETE", path: p + "/p1/members/{}"},
		{method: "GET", path: g, readOnly: true}, {method: "GET", path: g + "/{}", readOnly: true},
		{method: "GET", path: g + "/{}/members", readOnly: true}, {method: "GET", path: p, readOnly: true},
		{method: "GET", path: hsmBase + "/memberships", readOnly: true}, {method: "GET", path: hsmBase + "/memberships/{}", readOnly: true},
	}
	seeds := []seed{
		{route: "POST " + g, body: `{"label":"a","members":{"ids":["x0c0s0b0n0","x0c0s0b0n1"]}}`},
		{route: "POST " + g, body: `{"label":"Blue","description":"d","tags":["T1"],"members":{"ids":["x0c0s0b0n0","x00c0s0b0n1","x0c0s0b0n0"]}}`},
		{route: "POST " + g, body: `{"label":"bad label!"}`},
		{route: "POST " + g, body: `{"label":"e1","exclusiveGroup":"ex","members":{"ids":["x0c0s0b0n0"]}}`},
		{route: "POST " + g, body: `{"label":"e2","exclusiveGroup":"ex","members":{"ids":["x0c0s0b0n1","x0c0s0b0n0"]}}`},
		{route: "POST " + g, body: `{"label":"c","label":"d"}`},
		{route: "POST " + g, body: `{"label":"c","Label":"d"}`},
		{route: "PATCH " + g + "/{}", param: "blue", body: `{"description":"new","tags":["t2"]}`},
		{route: "PATCH " + g + "/{}", param: "blue", body: `{"tags":"t2"}`},
		{route: "DELETE " + g + "/{}", param: "nope"},
		{route: "POST " + g + "/blue/members", body: `{"id":"x0c0s0b0n1"}`},
		{route: "POST " + g + "/blue/members", body: `{"id":"bogus"}`},
		{route: "DELETE " + g + "/blue/members/{}", param: "x9c0s0b0n0"},
		{route: "POST " + p, body: `{"name":"p2","members":{"ids":["x0c0s0b0n1"]}}`},
		{route: "POST " + p, body: `{"name":"p3","members":{"ids":["x0c0s0b0n0"]}}`},
		{route: "PATCH " + p + "/{}", param: "p1", body: `{"description":"x\u0000"}`},
		{route: "POST " + p + "/p1/members", body: `{"id":"x0c0s0b0n0"}`},
		{route: "GET " + g, query: "group=blue&tag=t1"}, {route: "GET " + g, query: "partition=p%zz"},
		{route: "GET " + g + "/{}/members", param: "blue", query: "partition=p1"},
		{route: "GET " + hsmBase + "/memberships", query: "type=Node&state=Ready&partition=p1&group=blue"},
		{route: "GET " + hsmBase + "/memberships/{}", param: "x0c0s0b0n0"},
	}
	fuzzRoutes(f, tg, routes, withHostile(seeds, "blue", "POST "+g, "PATCH "+g+"/{}", "POST "+p))
}

func FuzzHSMLocks(f *testing.F) {
	tg := startHSM(f, hsmComponents)
	l := hsmBase + "/locks"
	routes := []route{
		{method: "POST", path: l + "/reservations"}, {method: "POST", path: l + "/reservations/remove"},
		{method: "POST", path: l + "/reservations/release"}, {method: "POST", path: l + "/service/reservations"},
		{method: "POST", path: l + "/service/reservations/renew"}, {method: "POST", path: l + "/service/reservations/release"},
		{method: "POST", path: l + "/service/reservations/check", readOnly: true},
		{method: "GET", path: l + "/status", readOnly: true}, {method: "POST", path: l + "/status", readOnly: true},
		{method: "POST", path: l + "/lock"}, {method: "POST", path: l + "/unlock"},
		{method: "POST", path: l + "/repair"}, {method: "POST", path: l + "/disable"},
	}
	seeds := []seed{
		{route: "POST " + l + "/reservations", body: `{"ComponentIDs":["x0c0s0b0n0"],"ProcessingModel":"flexible"}`},
		{route: "POST " + l + "/reservations", body: `{"ComponentIDs":["x0c0s0b0n1","x7c0s0b0n0"]}`},
		{route: "POST " + l + "/reservations", body: `{"ComponentIDs":["x0c0s0b0n1"],"ProcessingModel":"loose"}`},
		{route: "POST " + l + "/service/reservations", body: `{"ComponentIDs":["x0c0s0b0n1"],"ReservationDuration":16}`},
		{route: "POST " + l + "/service/reservations", body: `{"ComponentIDs":["x0c0s0b0n1"],"ReservationDuration":-1}`},
		{route: "POST " + l + "/service/reservations/renew", body: `{"ReservationKeys":[{"ID":"x0c0s0b0n1","Key":"bogus"}],"ReservationDuration":1}`},
		{route: "POST " + l + "/service/reservations/release", body: `{"ReservationKeys":[{"ID":"x0c0s0b0n1"}]}`},
		{route: "POST " + l + "/service/reservations/check", body: `{"DeputyKeys":[{"ID":"x0c0s0b0n1","Key":"k"}]}`},
		{route: "POST " + l + "/reservations/remove", body: `{"ComponentIDs":["x0c0s0b0n0"]}`},
		{route: "POST " + l + "/reservations/release", body: `{"ReservationKeys":[{"ID":"x0c0s0b0n0","Key":"x"}]}`},
		{route: "GET " + l + "/status", query: "type=Node&locked=true&reserved=false"},
		{route: "GET " + l + "/status", query: "locked=maybe"},
		{route: "POST " + l + "/status", body: `{"ComponentIDs":["x0c0s0b0n1","x7c0s0b0n0"]}`},
		{route: "POST " + l + "/lock", body: `{"ComponentIDs":["x0c0s0b0n0"],"ProcessingModel":"rigid"}`},
		{route: "POST " + l + "/lock", body: `{"ComponentIDs":["x0c0s0b0n0","n1"]}`},
		{route: "POST " + l + "/unlock", body: `{"ComponentIDs":["x0c0s0b0n0"]}`},
		{route: "POST " + l + "/disable", body: `{"ComponentIDs":["x0c0s0b0n1"],"ProcessingModel":"flexible"}`},
		{route: "POST " + l + "/repair", body: `{"ComponentIDs":["x0c0s0b0n1"]}`},
		{route: "POST " + l + "/lock", body: `{"ComponentIDs":["x0c0s0b0n0"],"componentIDs":["x0c0s0b0n1"]}`},
	}
	fuzzRoutes(f, tg, routes, withHostile(seeds, "", "POST "+l+"/reservations", "POST "+l+"/lock", "POST "+l+"/service/reservations/renew"))
}

// FuzzHSMSubscriptions stores generated callback URLs; its daemon has no
// components, so HSM never has an SCN to send to one.
func FuzzHSMSubscriptions(f *testing.F) {
	tg := startHSM(f)
	s := hsmBase + "/Subscriptions/SCN"
	tg.mustDo(f, "POST", s, `{"Subscriber":"hmnfd@host","Enabled":true,"Roles":["compute"],"States":["Ready","Off"],"Url":"http://127.0.0.1:1/scn"}`, 0)
	routes := []route{
		{method: "POST", path: s}, {method: "PUT", path: s + "/{}"}, {method: "PATCH", path: s + "/{}"},
		{method: "DELETE", path: s + "/{}"}, {method: "DELETE", path: s},
		{method: "GET", path: s, readOnly: true}, {method: "GET", path: s + "/{}", readOnly: true},
		{method: "GET", path: s + "/deadletters", readOnly: true},
	}
	seeds := []seed{
		{route: "POST " + s, body: `{"Subscriber":"bss","Roles":["Compute"],"Url":"http://127.0.0.1:2/scn"}`},
		{route: "POST " + s, body: `{"Subscriber":"hmnfd\u202e@host","Url":"http://127.0.0.1:3/","States":["On"]}`},
		{route: "POST " + s, body: `{"Subscriber":"hmnfd\u0000","Url":"http://127.0.0.1:3/","States":["On"]}`},
		{route: "POST " + s, body: `{"Subscriber":"x","Url":"ftp://127.0.0.1/","States":["On"]}`},
		{route: "POST " + s, body: `{"Subscriber":"x","Url":"http://127.0.0.1:4/","States":["sleepy"]}`},
		{route: "POST " + s, body: `{"Subscriber":"x","Url":"http://127.0.0.1:4/","url":"http://127.0.0.1:5/"}`},
		{route: "PUT " + s + "/{}", param: "1", body: `{"Subscriber":"hmnfd@host","Enabled":false,"Url":"http://127.0.0.1:1/scn"}`},
		{route: "PATCH " + s + "/{}", param: "1", body: `{"Op":"add","States":["Standby"]}`},
		{route: "PATCH " + s + "/{}", param: "1", body: `{"Op":"explode","States":["Standby"]}`},
		{route: "PATCH " + s + "/{}", param: "x", body: `{"Op":"remove","Roles":["compute"]}`},
		{route: "DELETE " + s + "/{}", param: "99"},
		{route: "GET " + s + "/{}", param: "-1"},
	}
	fuzzRoutes(f, tg, routes, withHostile(seeds, "1", "POST "+s, "PATCH "+s+"/{}", "PUT "+s+"/{}"))
}

func FuzzHSMNodeMaps(f *testing.F) {
	tg := startHSM(f)
	n := hsmBase + "/Defaults/NodeMaps"
	routes := []route{
		{method: "POST", path: n}, {method: "PUT", path: n + "/{}"}, {method: "DELETE", path: n + "/{}"},
		{method: "DELETE", path: n}, {method: "GET", path: n + "/{}", readOnly: true},
	}
	seeds := []seed{
		{route: "POST " + n, body: `{"NodeMaps":[{"ID":"x0c0s0b0n0","NID":1,"Role":"Compute"},{"ID":"x0c0s0b0n1","NID":2,"SubRole":"Worker"}]}`},
		{route: "POST " + n, body: `{"NodeMaps":[{"ID":"x0c0s0b0n2","NID":3},{"ID":"bogus","NID":4}]}`},
		{route: "POST " + n, body: `{"NodeMaps":[{"ID":"x0c0s0b0n3","NID":-1}]}`},
		{route: "PUT " + n + "/{}", param: "x0c0s0b0n4v1", body: `{"NID":15}`},
		{route: "PUT " + n + "/{}", param: "x0c0s0b0n4", body: `{"ID":"x0c0s0b0n5","NID":15}`},
		{route: "PUT " + n + "/{}", param: "x0c0s0b0n4", body: `{"NID":15,"nid":16}`},
		{route: "DELETE " + n + "/{}", param: "x9c0s0b0n0"},
		{route: "GET " + n + "/{}", param: "x0c0s0b0n0"},
	}
	fuzzRoutes(f, tg, routes, withHostile(seeds, "x0c0s0b0n0", "POST "+n, "PUT "+n+"/{}"))
}
