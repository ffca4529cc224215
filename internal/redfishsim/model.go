package redfishsim

import (
	"encoding/json"
	"fmt"
)

// Shape of a generated system: enough hardware for an inventory walk to find
// every component kind HSM records (Processor, Memory, NodeNic).
const (
	cpusPerSystem  = 2
	dimmsPerSystem = 4
	nicsPerSystem  = 2
	dimmMiB        = 32768
)

// ResetTypes returns the ComputerSystem.Reset types a generated system
// advertises in ResetType@Redfish.AllowableValues.
func ResetTypes() []string {
	return []string{"On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "Nmi", "PushPowerButton"}
}

// Template builds the generated model with the given number of systems (at
// least 1) as a templated Tree: identity values (MACs, UUIDs, serial numbers,
// host names) are tokens that each BMC fills in from its own xname when it
// serves a body, so one Template is shared by a whole fleet.
//
// The model is one Manager "BMC" (with an EthernetInterface, a NetworkProtocol
// and Manager.Reset), one Chassis "Enclosure", and systems "Node0".."NodeN-1",
// each powered On with 2 Processors, 4 DIMMs, 2 EthernetInterfaces and the
// ComputerSystem.Reset action; plus AccountService (account "1"),
// SessionService, the OData service document and a small $metadata.
func Template(systems int) *Tree {
	if systems < 1 {
		systems = 1
	}
	g := gen{t: &Tree{res: map[string]resource{}, templated: true}}
	g.root()
	g.services()
	g.manager(systems)
	g.chassis(systems)
	var sysLinks []any
	for i := range systems {
		sysLinks = append(sysLinks, g.system(i))
	}
	g.collection("/Systems", "#ComputerSystemCollection.ComputerSystemCollection", "Computer System Collection", sysLinks)
	return g.t
}

// Generate returns the generated model (see Template) with its identity values
// filled in for xname: the same xname always yields the same MACs, UUIDs and
// serial numbers.
func Generate(xname string, systems int) *Tree {
	tpl := Template(systems)
	t := &Tree{res: make(map[string]resource, len(tpl.res))}
	for k, r := range tpl.res {
		t.res[k] = resource{body: expand(r.body, xname, nil), xml: r.xml}
	}
	return t
}

// gen accumulates the resources of a generated tree.
type gen struct{ t *Tree }

// obj is a JSON object under construction.
type obj = map[string]any

func link(p string) obj { return obj{"@odata.id": Root + p} }

func links(ps ...string) []any {
	out := make([]any, len(ps))
	for i, p := range ps {
		out[i] = link(p)
	}
	return out
}

func statusOK() obj { return obj{"State": "Enabled", "Health": "OK"} }

// put stores o at Root+p with its @odata.id and @odata.type set.
func (g gen) put(p, odataType string, o obj) {
	o["@odata.id"] = Root + p
	if odataType != "" {
		o["@odata.type"] = odataType
	}
	body, err := json.Marshal(o)
	if err != nil {
		panic(fmt.Sprintf("redfishsim: marshal generated %s: %v", p, err)) // only plain maps, slices and strings
	}
	g.t.res[Canonical(Root+p)] = resource{body: body}
}

func (g gen) collection(p, odataType, name string, members []any) {
	if members == nil {
		members = []any{}
	}
	g.put(p, odataType, obj{"Name": name, "Members": members, "Members@odata.count": len(members)})
}

func (g gen) root() {
	g.put("", "#ServiceRoot.v1_5_0.ServiceRoot", obj{
		"Id": "RootService", "Name": "Root Service", "RedfishVersion": "1.7.0",
		"UUID": "@@uuid:root@@", "Vendor": "HMS Suite",
		"Systems": link("/Systems"), "Chassis": link("/Chassis"), "Managers": link("/Managers"),
		"SessionService": link("/SessionService"), "AccountService": link("/AccountService"),
		"Links": obj{"Sessions": link("/SessionService/Sessions")},
	})
	g.put("/odata", "", obj{"@odata.context": Root + "/$metadata", "value": []any{
		obj{"name": "Service", "kind": "Singleton", "url": Root + "/"},
		obj{"name": "Systems", "kind": "Singleton", "url": Root + "/Systems"},
		obj{"name": "Chassis", "kind": "Singleton", "url": Root + "/Chassis"},
		obj{"name": "Managers", "kind": "Singleton", "url": Root + "/Managers"},
		obj{"name": "SessionService", "kind": "Singleton", "url": Root + "/SessionService"},
		obj{"name": "AccountService", "kind": "Singleton", "url": Root + "/AccountService"},
	}})
	g.t.res[Root+"/$metadata"] = resource{xml: true, body: []byte(`<?xml version="1.0" encoding="UTF-8"?>
<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0">
  <edmx:Reference Uri="http://redfish.dmtf.org/schemas/v1/ServiceRoot_v1.xml">
    <edmx:Include Namespace="ServiceRoot.v1_5_0"/>
  </edmx:Reference>
  <edmx:DataServices>
    <Schema xmlns="http://docs.oasis-open.org/odata/ns/edm" Namespace="Service">
      <EntityContainer Name="Service" Extends="ServiceRoot.v1_5_0.ServiceContainer"/>
    </Schema>
  </edmx:DataServices>
</edmx:Edmx>
`)}
}

func (g gen) services() {
	g.put("/SessionService", "#SessionService.v1_1_8.SessionService", obj{
		"Id": "SessionService", "Name": "Session Service", "ServiceEnabled": true, "SessionTimeout": 1800,
		"Status": statusOK(), "Sessions": link("/SessionService/Sessions"),
	})
	g.put("/AccountService", "#AccountService.v1_5_0.AccountService", obj{
		"Id": "AccountService", "Name": "Account Service", "ServiceEnabled": true, "Status": statusOK(),
		"MinPasswordLength": 1, "MaxPasswordLength": 64, "Accounts": link("/AccountService/Accounts"),
	})
	g.collection("/AccountService/Accounts", "#ManagerAccountCollection.ManagerAccountCollection", "Accounts Collection",
		links("/AccountService/Accounts/1"))
	g.put("/AccountService/Accounts/1", "#ManagerAccount.v1_3_0.ManagerAccount", obj{
		"Id": "1", "Name": "User Account", "UserName": "root", "Password": nil, "RoleId": "Administrator",
		"Enabled": true, "Locked": false,
	})
}

func (g gen) manager(systems int) {
	g.collection("/Managers", "#ManagerCollection.ManagerCollection", "Manager Collection", links("/Managers/BMC"))
	g.put("/Managers/BMC", "#Manager.v1_5_0.Manager", obj{
		"Id": "BMC", "Name": "Manager", "ManagerType": "BMC", "Manufacturer": "HMS Suite", "Model": "SimBMC",
		"FirmwareVersion": "1.0.0", "UUID": "@@uuid:bmc@@", "SerialNumber": "@@serial:bmc@@",
		"PowerState": "On", "Status": statusOK(),
		"EthernetInterfaces": link("/Managers/BMC/EthernetInterfaces"),
		"NetworkProtocol":    link("/Managers/BMC/NetworkProtocol"),
		"Links":              obj{"ManagerForServers": systemLinks(systems), "ManagerForChassis": links("/Chassis/Enclosure")},
		"Actions": obj{"#Manager.Reset": obj{
			"target":                            Root + "/Managers/BMC/Actions/Manager.Reset",
			"ResetType@Redfish.AllowableValues": []any{"ForceRestart", "GracefulRestart"},
		}},
	})
	g.collection("/Managers/BMC/EthernetInterfaces", "#EthernetInterfaceCollection.EthernetInterfaceCollection",
		"Ethernet Network Interface Collection", links("/Managers/BMC/EthernetInterfaces/eth0"))
	g.put("/Managers/BMC/EthernetInterfaces/eth0", "#EthernetInterface.v1_4_1.EthernetInterface", obj{
		"Id": "eth0", "Name": "Manager Ethernet Interface", "InterfaceEnabled": true, "LinkStatus": "LinkUp",
		"MACAddress": "@@mac:bmc:eth0@@", "PermanentMACAddress": "@@mac:bmc:eth0@@", "SpeedMbps": 1000,
		"HostName": "@@xname@@", "FQDN": "@@xname@@", "Status": statusOK(),
	})
	g.put("/Managers/BMC/NetworkProtocol", "#ManagerNetworkProtocol.v1_4_0.ManagerNetworkProtocol", obj{
		"Id": "NetworkProtocol", "Name": "Manager Network Protocol", "HostName": "@@xname@@", "FQDN": "@@xname@@",
		"Status": statusOK(),
		"HTTP":   obj{"ProtocolEnabled": true, "Port": 80},
		"HTTPS":  obj{"ProtocolEnabled": true, "Port": 443},
		"IPMI":   obj{"ProtocolEnabled": false, "Port": 623},
		"SSH":    obj{"ProtocolEnabled": true, "Port": 22},
		"NTP":    obj{"ProtocolEnabled": false, "NTPServers": []any{}},
		"SNMP":   obj{"ProtocolEnabled": false, "Port": 161},
	})
}

func (g gen) chassis(systems int) {
	g.collection("/Chassis", "#ChassisCollection.ChassisCollection", "Chassis Collection", links("/Chassis/Enclosure"))
	g.put("/Chassis/Enclosure", "#Chassis.v1_9_0.Chassis", g.enclosure(systems))
}

func (g gen) enclosure(systems int) obj {
	return obj{
		"Id": "Enclosure", "Name": "Enclosure", "ChassisType": "RackMount", "Manufacturer": "HMS Suite",
		"Model": "SimChassis", "SerialNumber": "@@serial:chassis@@", "PartNumber": "SIM-CH-1",
		"PowerState": "On", "Status": statusOK(),
		"Links": obj{"ComputerSystems": systemLinks(systems), "ManagedBy": links("/Managers/BMC")},
	}
}

// system generates Node<i> and its sub-collections and returns its link.
func (g gen) system(i int) any {
	id := fmt.Sprintf("Node%d", i)
	p := "/Systems/" + id
	s := fmt.Sprintf("s%d", i)
	var cpus, dimms, nics []string
	for c := range cpusPerSystem {
		cp := fmt.Sprintf("%s/Processors/CPU%d", p, c)
		cpus = append(cpus, cp)
		g.put(cp, "#Processor.v1_3_0.Processor", obj{
			"Id": fmt.Sprintf("CPU%d", c), "Name": "Processor", "Socket": fmt.Sprintf("CPU %d", c),
			"ProcessorType": "CPU", "ProcessorArchitecture": "x86", "InstructionSet": "x86-64",
			"Manufacturer": "Intel(R) Corporation", "Model": "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz",
			"MaxSpeedMHz": 2400, "TotalCores": 20, "TotalThreads": 40, "Status": statusOK(),
			"SerialNumber": fmt.Sprintf("@@serial:%s:cpu%d@@", s, c), "PartNumber": "SIM-CPU-6148",
		})
	}
	for d := range dimmsPerSystem {
		dp := fmt.Sprintf("%s/Memory/DIMM%d", p, d)
		dimms = append(dimms, dp)
		g.put(dp, "#Memory.v1_7_0.Memory", obj{
			"Id": fmt.Sprintf("DIMM%d", d), "Name": fmt.Sprintf("DIMM%d", d), "MemoryType": "DRAM",
			"MemoryDeviceType": "DDR4", "CapacityMiB": dimmMiB, "OperatingSpeedMhz": 2666,
			"Manufacturer": "Hynix", "PartNumber": "HMA84GR7AFR4N-VK",
			"SerialNumber": fmt.Sprintf("@@serial:%s:dimm%d@@", s, d), "Status": statusOK(),
			"MemoryLocation": obj{"Socket": d / 2, "Channel": d % 2, "Slot": d},
		})
	}
	for n := range nicsPerSystem {
		np := fmt.Sprintf("%s/EthernetInterfaces/eth%d", p, n)
		nics = append(nics, np)
		mac := fmt.Sprintf("@@mac:%s:eth%d@@", s, n)
		g.put(np, "#EthernetInterface.v1_4_1.EthernetInterface", obj{
			"Id": fmt.Sprintf("eth%d", n), "Name": "System Ethernet Interface", "InterfaceEnabled": true,
			"LinkStatus": "LinkUp", "MACAddress": mac, "PermanentMACAddress": mac, "SpeedMbps": 25000,
			"Status": statusOK(),
		})
	}
	g.collection(p+"/Processors", "#ProcessorCollection.ProcessorCollection", "Processors Collection", links(cpus...))
	g.collection(p+"/Memory", "#MemoryCollection.MemoryCollection", "Memory Module Collection", links(dimms...))
	g.collection(p+"/EthernetInterfaces", "#EthernetInterfaceCollection.EthernetInterfaceCollection",
		"Ethernet Interface Collection", links(nics...))
	g.put(p, "#ComputerSystem.v1_10_0.ComputerSystem", obj{
		"Id": id, "Name": id, "SystemType": "Physical", "Manufacturer": "HMS Suite", "Model": "SimNode",
		"SerialNumber": fmt.Sprintf("@@serial:%s@@", s), "UUID": fmt.Sprintf("@@uuid:%s@@", s),
		"HostName": fmt.Sprintf("@@xname@@n%d", i), "PowerState": "On", "BiosVersion": "SIM.1.0",
		"Status":           statusOK(),
		"ProcessorSummary": obj{"Count": cpusPerSystem, "Model": "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz", "Status": statusOK()},
		"MemorySummary":    obj{"TotalSystemMemoryGiB": dimmsPerSystem * dimmMiB / 1024, "Status": statusOK()},
		"Boot": obj{"BootSourceOverrideEnabled": "Disabled", "BootSourceOverrideTarget": "None",
			"BootSourceOverrideTarget@Redfish.AllowableValues": []any{"None", "Pxe", "Hdd", "BiosSetup"}},
		"Processors":         link(p + "/Processors"),
		"Memory":             link(p + "/Memory"),
		"EthernetInterfaces": link(p + "/EthernetInterfaces"),
		"Links":              obj{"Chassis": links("/Chassis/Enclosure"), "ManagedBy": links("/Managers/BMC")},
		"Actions": obj{"#ComputerSystem.Reset": obj{
			"target":                            Root + p + "/Actions/ComputerSystem.Reset",
			"ResetType@Redfish.AllowableValues": toAny(ResetTypes()),
		}},
	})
	return link(p)
}

// systemLinks links the generated systems Node0..Node<n-1>.
func systemLinks(n int) []any {
	out := make([]any, n)
	for i := range n {
		out[i] = link(fmt.Sprintf("/Systems/Node%d", i))
	}
	return out
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
