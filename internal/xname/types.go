package xname

// Type is an HMS component type (HMSType), such as "Node" or "NodeBMC".
// The constant values are the spellings HMS services put on the wire.
type Type string

// Component types, declared in the order HMS declares them. The comment on
// each names its xname form.
const (
	CDU                      Type = "CDU"                      // dD
	CDUMgmtSwitch            Type = "CDUMgmtSwitch"            // dDwW
	CabinetCDU               Type = "CabinetCDU"               // xXdD
	Cabinet                  Type = "Cabinet"                  // xX
	CabinetBMC               Type = "CabinetBMC"               // xXbB
	CabinetPDUController     Type = "CabinetPDUController"     // xXmM
	CabinetPDU               Type = "CabinetPDU"               // xXmMpP
	CabinetPDUNic            Type = "CabinetPDUNic"            // xXmMiI
	CabinetPDUOutlet         Type = "CabinetPDUOutlet"         // xXmMpPjJ (deprecated)
	CabinetPDUPowerConnector Type = "CabinetPDUPowerConnector" // xXmMpPvV
	Chassis                  Type = "Chassis"                  // xXcC
	ChassisBMC               Type = "ChassisBMC"               // xXcCbB
	ChassisBMCNic            Type = "ChassisBMCNic"            // xXcCbBiI
	CMMRectifier             Type = "CMMRectifier"             // xXcCtT
	CMMFpga                  Type = "CMMFpga"                  // xXcCfF
	CEC                      Type = "CEC"                      // xXeE
	ComputeModule            Type = "ComputeModule"            // xXcCsS
	RouterModule             Type = "RouterModule"             // xXcCrR
	NodeBMC                  Type = "NodeBMC"                  // xXcCsSbB
	NodeBMCNic               Type = "NodeBMCNic"               // xXcCsSbBiI
	NodeEnclosure            Type = "NodeEnclosure"            // xXcCsSeE
	NodeEnclosurePowerSupply Type = "NodeEnclosurePowerSupply" // xXcCsSeEtT
	NodePowerConnector       Type = "NodePowerConnector"       // xXcCsSvV (or deprecated xXcCsSjJ)
	Node                     Type = "Node"                     // xXcCsSbBnN
	VirtualNode              Type = "VirtualNode"              // xXcCsSbBnNvV
	Processor                Type = "Processor"                // xXcCsSbBnNpP
	StorageGroup             Type = "StorageGroup"             // xXcCsSbBnNgG
	Drive                    Type = "Drive"                    // xXcCsSbBnNgGkK
	NodeNic                  Type = "NodeNic"                  // xXcCsSbBnNiI
	NodeHsnNic               Type = "NodeHsnNic"               // xXcCsSbBnNhH
	Memory                   Type = "Memory"                   // xXcCsSbBnNdD
	NodeAccel                Type = "NodeAccel"                // xXcCsSbBnNaA
	NodeAccelRiser           Type = "NodeAccelRiser"           // xXcCsSbBnNrR
	NodeFpga                 Type = "NodeFpga"                 // xXcCsSbBfF
	HSNAsic                  Type = "HSNAsic"                  // xXcCrRaA
	RouterFpga               Type = "RouterFpga"               // xXcCrRfF
	RouterTOR                Type = "RouterTOR"                // xXcCrRtT
	RouterTORFpga            Type = "RouterTORFpga"            // xXcCrRtTfF
	RouterBMC                Type = "RouterBMC"                // xXcCrRbB
	RouterBMCNic             Type = "RouterBMCNic"             // xXcCrRbBiI
	RouterPowerConnector     Type = "RouterPowerConnector"     // xXcCrRvV
	HSNBoard                 Type = "HSNBoard"                 // xXcCrReE
	HSNLink                  Type = "HSNLink"                  // xXcCrRaAlL
	HSNConnector             Type = "HSNConnector"             // xXcCrRjJ
	HSNConnectorPort         Type = "HSNConnectorPort"         // xXcCrRjJpP
	MgmtSwitch               Type = "MgmtSwitch"               // xXcCwW
	MgmtHLSwitchEnclosure    Type = "MgmtHLSwitchEnclosure"    // xXcChH
	MgmtHLSwitch             Type = "MgmtHLSwitch"             // xXcChHsS
	MgmtSwitchConnector      Type = "MgmtSwitchConnector"      // xXcCwWjJ
	SMSBox                   Type = "SMSBox"                   // smsN
	System                   Type = "System"                   // s0
	Partition                Type = "Partition"                // pN or pN.M
	TypeAll                  Type = "All"                      // all
	TypeAllComp              Type = "AllComp"                  // all_comp
	TypeAllSvc               Type = "AllSvc"                   // all_svc
	TypeInvalid              Type = "INVALID"                  // not a valid type or xname
)

// kind indexes grammar. Its order is the order of Types.
type kind uint8

const (
	kInvalid kind = iota
	kCDU
	kCDUMgmtSwitch
	kCabinetCDU
	kCabinet
	kCabinetBMC
	kCabinetPDUController
	kCabinetPDU
	kCabinetPDUNic
	kCabinetPDUOutlet
	kCabinetPDUPowerConnector
	kChassis
	kChassisBMC
	kChassisBMCNic
	kCMMRectifier
	kCMMFpga
	kCEC
	kComputeModule
	kRouterModule
	kNodeBMC
	kNodeBMCNic
	kNodeEnclosure
	kNodeEnclosurePowerSupply
	kNodePowerConnector
	kNode
	kVirtualNode
	kProcessor
	kStorageGroup
	kDrive
	kNodeNic
	kNodeHsnNic
	kMemory
	kNodeAccel
	kNodeAccelRiser
	kNodeFpga
	kHSNAsic
	kRouterFpga
	kRouterTOR
	kRouterTORFpga
	kRouterBMC
	kRouterBMCNic
	kRouterPowerConnector
	kHSNBoard
	kHSNLink
	kHSNConnector
	kHSNConnectorPort
	kMgmtSwitch
	kMgmtHLSwitchEnclosure
	kMgmtHLSwitch
	kMgmtSwitchConnector
	kSMSBox
	kSystem
	kPartition
	kAll
	kAllComp
	kAllSvc
	numKinds
)

// maxNum bounds the numbers the HMS regexes leave unbounded ([0-9]+), so
// that every number fits an int32.
const maxNum = 1<<31 - 1

// node is one row of the grammar: an xname of this type is its parent's
// xname followed by letter (or alt) and a number in [min, max].
type node struct {
	typ       Type
	parent    kind
	letter    byte
	alt       byte // second accepted letter, 0 if none
	min, max  int32
	noun      string // names the number in error messages
	sls       string // SLS comptype_* name, "" if SLS has none
	ctl, cont bool   // controller, container
}

// grammar is the xname grammar tree (hms-xname xnametypes/hmstypes.go),
// indexed by kind. It is never modified. The ranges are the HMS regexes'
// ranges applied to normalised numbers.
//
// NodeFpga's parent is NodeBMC here: HMS's table says NodeEnclosure, but the
// xname xXcCsSbBfF is a NodeBMC followed by fF, and HMS's own string-based
// parent function returns the NodeBMC.
var grammar = [numKinds]node{
	kInvalid:                  {typ: TypeInvalid},
	kCDU:                      {typ: CDU, parent: kSystem, letter: 'd', max: maxNum, noun: "CDU", sls: "comptype_cdu"},
	kCDUMgmtSwitch:            {typ: CDUMgmtSwitch, parent: kCDU, letter: 'w', max: maxNum, noun: "CDU switch", sls: "comptype_cdu_mgmt_switch"},
	kCabinetCDU:               {typ: CabinetCDU, parent: kCabinet, letter: 'd', max: 1, noun: "cabinet CDU"},
	kCabinet:                  {typ: Cabinet, parent: kSystem, letter: 'x', max: 9999, noun: "cabinet", sls: "comptype_cabinet", cont: true},
	kCabinetBMC:               {typ: CabinetBMC, parent: kCabinet, letter: 'b', max: 0, noun: "cabinet BMC"},
	kCabinetPDUController:     {typ: CabinetPDUController, parent: kCabinet, letter: 'm', max: 3, noun: "PDU controller", sls: "comptype_cab_pdu_controller", ctl: true},
	kCabinetPDU:               {typ: CabinetPDU, parent: kCabinetPDUController, letter: 'p', max: 7, noun: "PDU", sls: "comptype_cab_pdu"},
	kCabinetPDUNic:            {typ: CabinetPDUNic, parent: kCabinetPDUController, letter: 'i', max: 3, noun: "PDU controller NIC"},
	kCabinetPDUOutlet:         {typ: CabinetPDUOutlet, parent: kCabinetPDU, letter: 'j', min: 1, max: maxNum, noun: "PDU outlet"},
	kCabinetPDUPowerConnector: {typ: CabinetPDUPowerConnector, parent: kCabinetPDU, letter: 'v', min: 1, max: maxNum, noun: "PDU power connector"},
	kChassis:                  {typ: Chassis, parent: kCabinet, letter: 'c', max: 7, noun: "chassis", sls: "comptype_chassis", cont: true},
	kChassisBMC:               {typ: ChassisBMC, parent: kChassis, letter: 'b', max: 0, noun: "chassis BMC", sls: "comptype_chassis_bmc", ctl: true},
	kChassisBMCNic:            {typ: ChassisBMCNic, parent: kChassisBMC, letter: 'i', max: 3, noun: "chassis BMC NIC"},
	kCMMRectifier:             {typ: CMMRectifier, parent: kChassis, letter: 't', max: 9, noun: "rectifier"},
	kCMMFpga:                  {typ: CMMFpga, parent: kChassis, letter: 'f', max: 0, noun: "CMM FPGA"},
	kCEC:                      {typ: CEC, parent: kCabinet, letter: 'e', max: 1, noun: "CEC"},
	kComputeModule:            {typ: ComputeModule, parent: kChassis, letter: 's', max: maxNum, noun: "slot", sls: "comptype_compmod", cont: true},
	kRouterModule:             {typ: RouterModule, parent: kChassis, letter: 'r', max: maxNum, noun: "router module", sls: "comptype_rtrmod", cont: true},
	kNodeBMC:                  {typ: NodeBMC, parent: kComputeModule, letter: 'b', max: maxNum, noun: "node BMC", sls: "comptype_ncard", ctl: true},
	kNodeBMCNic:               {typ: NodeBMCNic, parent: kNodeBMC, letter: 'i', max: 3, noun: "node BMC NIC", sls: "comptype_bmc_nic"},
	kNodeEnclosure:            {typ: NodeEnclosure, parent: kComputeModule, letter: 'e', max: maxNum, noun: "node enclosure", cont: true},
	kNodeEnclosurePowerSupply: {typ: NodeEnclosurePowerSupply, parent: kNodeEnclosure, letter: 't', max: maxNum, noun: "power supply"},
	kNodePowerConnector:       {typ: NodePowerConnector, parent: kComputeModule, letter: 'v', alt: 'j', min: 1, max: 2, noun: "node power connector", sls: "comptype_compmod_power_connector"},
	kNode:                     {typ: Node, parent: kNodeBMC, letter: 'n', max: maxNum, noun: "node", sls: "comptype_node"},
	kVirtualNode:              {typ: VirtualNode, parent: kNode, letter: 'v', max: maxNum, noun: "virtual node", sls: "comptype_virtual_node"},
	kProcessor:                {typ: Processor, parent: kNode, letter: 'p', max: 3, noun: "processor"},
	kStorageGroup:             {typ: StorageGroup, parent: kNode, letter: 'g', max: maxNum, noun: "storage group"},
	kDrive:                    {typ: Drive, parent: kStorageGroup, letter: 'k', max: maxNum, noun: "drive"},
	kNodeNic:                  {typ: NodeNic, parent: kNode, letter: 'i', max: 3, noun: "node NIC"},
	kNodeHsnNic:               {typ: NodeHsnNic, parent: kNode, letter: 'h', max: 3, noun: "node HSN NIC", sls: "comptype_node_hsn_nic"},
	kMemory:                   {typ: Memory, parent: kNode, letter: 'd', max: maxNum, noun: "memory"},
	kNodeAccel:                {typ: NodeAccel, parent: kNode, letter: 'a', max: maxNum, noun: "accelerator"},
	kNodeAccelRiser:           {typ: NodeAccelRiser, parent: kNode, letter: 'r', max: 7, noun: "accelerator riser"},
	kNodeFpga:                 {typ: NodeFpga, parent: kNodeBMC, letter: 'f', max: 0, noun: "node FPGA"},
	kHSNAsic:                  {typ: HSNAsic, parent: kRouterModule, letter: 'a', max: 3, noun: "HSN ASIC"},
	kRouterFpga:               {typ: RouterFpga, parent: kRouterModule, letter: 'f', max: 1, noun: "router FPGA"},
	kRouterTOR:                {typ: RouterTOR, parent: kRouterModule, letter: 't', max: maxNum, noun: "router TOR"},
	kRouterTORFpga:            {typ: RouterTORFpga, parent: kRouterTOR, letter: 'f', max: 1, noun: "router TOR FPGA"},
	kRouterBMC:                {typ: RouterBMC, parent: kRouterModule, letter: 'b', max: maxNum, noun: "router BMC", sls: "comptype_rtr_bmc", ctl: true},
	kRouterBMCNic:             {typ: RouterBMCNic, parent: kRouterBMC, letter: 'i', max: 3, noun: "router BMC NIC"},
	kRouterPowerConnector:     {typ: RouterPowerConnector, parent: kRouterModule, letter: 'v', min: 1, max: 2, noun: "router power connector"},
	kHSNBoard:                 {typ: HSNBoard, parent: kRouterModule, letter: 'e', max: maxNum, noun: "HSN board", cont: true},
	kHSNLink:                  {typ: HSNLink, parent: kHSNAsic, letter: 'l', max: maxNum, noun: "HSN link"},
	kHSNConnector:             {typ: HSNConnector, parent: kRouterModule, letter: 'j', min: 1, max: maxNum, noun: "HSN connector", sls: "comptype_hsn_connector"},
	kHSNConnectorPort:         {typ: HSNConnectorPort, parent: kHSNConnector, letter: 'p', max: 2, noun: "HSN connector port", sls: "comptype_hsn_connector_port"},
	kMgmtSwitch:               {typ: MgmtSwitch, parent: kChassis, letter: 'w', min: 1, max: maxNum, noun: "management switch", sls: "comptype_mgmt_switch"},
	kMgmtHLSwitchEnclosure:    {typ: MgmtHLSwitchEnclosure, parent: kChassis, letter: 'h', min: 1, max: maxNum, noun: "high-level switch enclosure"},
	kMgmtHLSwitch:             {typ: MgmtHLSwitch, parent: kMgmtHLSwitchEnclosure, letter: 's', min: 1, max: 9, noun: "high-level switch", sls: "comptype_hl_switch"},
	kMgmtSwitchConnector:      {typ: MgmtSwitchConnector, parent: kMgmtSwitch, letter: 'j', min: 1, max: maxNum, noun: "management switch connector", sls: "comptype_mgmt_switch_connector"},
	kSMSBox:                   {typ: SMSBox, max: maxNum, noun: "SMS box", sls: "comptype_ncn_box"},
	kSystem:                   {typ: System, letter: 's', max: 0, noun: "system", sls: "any"},
	kPartition:                {typ: Partition, letter: 'p', max: maxNum, noun: "partition"},
	kAll:                      {typ: TypeAll},
	kAllComp:                  {typ: TypeAllComp},
	kAllSvc:                   {typ: TypeAllSvc},
}

// child returns the type of the component that follows an xname of type p
// with letter c, or kInvalid. The scan is linear, but grammar is small and
// the comparisons are on two bytes, so this stays a few dozen nanoseconds.
func child(p kind, c byte) kind {
	for k := kCDU; k < numKinds; k++ {
		n := &grammar[k]
		if n.parent == p && (n.letter == c || n.alt == c) {
			return k
		}
	}
	return kInvalid
}

// kindOf returns t's grammar index, or kInvalid if t is not a known type.
// t must be spelled exactly as the constant; see ParseType for user input.
func kindOf(t Type) kind {
	for k := kCDU; k < numKinds; k++ {
		if grammar[k].typ == t {
			return k
		}
	}
	return kInvalid
}

// String returns t as a string.
func (t Type) String() string { return string(t) }

// Parent returns the type of the parent of a component of type t, or
// TypeInvalid for types without one (System, SMSBox, Partition, the "all"
// types) and for unknown types. Cabinet and CDU have parent System.
func (t Type) Parent() Type { return grammar[grammar[kindOf(t)].parent].typ }

// SLSType returns the SLS name of t ("comptype_node" for Node, "any" for
// System), or "" if SLS has no name for t.
func (t Type) SLSType() string { return grammar[kindOf(t)].sls }

// FromSLSType returns the Type whose SLS name is s, such as Node for
// "comptype_node". The match is exact, as it is in SLS.
func FromSLSType(s string) (Type, bool) {
	if s == "" {
		return TypeInvalid, false
	}
	for k := kCDU; k < numKinds; k++ {
		if grammar[k].sls == s {
			return grammar[k].typ, true
		}
	}
	return TypeInvalid, false
}

// ParseType returns the Type named s, matched without regard to ASCII case,
// so "node", "NODE" and HSM's swagger spelling "NodeNIC" give Node and
// NodeNic. It returns TypeInvalid and false for unknown names and for
// "INVALID" itself.
func ParseType(s string) (Type, bool) {
	for k := kCDU; k < numKinds; k++ {
		if equalFold(string(grammar[k].typ), s) {
			return grammar[k].typ, true
		}
	}
	return TypeInvalid, false
}

// Types returns every type Parse can return, in HMS declaration order
// followed by Partition and the "all" types. TypeInvalid is not included.
// The caller owns the returned slice.
func Types() []Type {
	ts := make([]Type, 0, numKinds-1)
	for k := kCDU; k < numKinds; k++ {
		ts = append(ts, grammar[k].typ)
	}
	return ts
}

// ChildTypes returns the types whose parent type is t, in the order of
// Types; it returns nil if there are none. The caller owns the slice.
func ChildTypes(t Type) []Type {
	p := kindOf(t)
	if p == kInvalid {
		return nil
	}
	var ts []Type
	for k := kCDU; k < numKinds; k++ {
		if grammar[k].parent == p {
			ts = append(ts, grammar[k].typ)
		}
	}
	return ts
}

// IsController reports whether t is a controller type, one that runs a
// Redfish service: ChassisBMC, RouterBMC, NodeBMC or CabinetPDUController.
func IsController(t Type) bool { return grammar[kindOf(t)].ctl }

// IsContainer reports whether t is a container type: Cabinet, Chassis,
// ComputeModule, RouterModule, NodeEnclosure or HSNBoard.
func IsContainer(t Type) bool { return grammar[kindOf(t)].cont }

// equalFold is strings.EqualFold restricted to ASCII, so that non-ASCII
// letters such as the Kelvin sign never match "k".
func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

// lower lower-cases an ASCII letter and returns any other byte unchanged.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
