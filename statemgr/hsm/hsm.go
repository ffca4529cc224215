// Package hsm holds the Hardware State Manager's wire types and vocabulary:
// the JSON bodies of the HSM v2 API (components, SCNs and subscriptions,
// Ethernet interfaces, Redfish endpoints, hardware inventory) and the
// enumerations HSM validates. It is what every daemon that talks to HSM
// imports; it links no server, database or Redfish library (only the
// standard library and internal/xname).
package hsm

// Component is one HSM component as it travels on the wire. All fields but ID
// and Type are omitted when empty, as HMS does.
type Component struct {
	ID                  string `json:"ID"`
	Type                string `json:"Type"`
	State               string `json:"State,omitempty"`
	Flag                string `json:"Flag,omitempty"`
	Enabled             *bool  `json:"Enabled,omitempty"`
	SoftwareStatus      string `json:"SoftwareStatus,omitempty"`
	Role                string `json:"Role,omitempty"`
	SubRole             string `json:"SubRole,omitempty"`
	NID                 *int   `json:"NID,omitempty"`
	Subtype             string `json:"Subtype,omitempty"`
	NetType             string `json:"NetType,omitempty"`
	Arch                string `json:"Arch,omitempty"`
	Class               string `json:"Class,omitempty"`
	ReservationDisabled bool   `json:"ReservationDisabled,omitempty"`
	Locked              bool   `json:"Locked,omitempty"`
}

// ComponentList is the body of GET /State/Components and the query endpoints.
type ComponentList struct {
	Components []Component `json:"Components"`
}

// ExtendedInfo is the optional explanation a PATCH may carry. HSM accepts and
// logs it; it is not stored.
type ExtendedInfo struct {
	ID      string `json:"ID,omitempty"`
	Message string `json:"Message,omitempty"`
	Flag    string `json:"Flag,omitempty"`
}

// States, as HMS spells them on the wire.
const (
	StateUnknown   = "Unknown"
	StateEmpty     = "Empty"
	StatePopulated = "Populated"
	StateOff       = "Off"
	StateOn        = "On"
	StateStandby   = "Standby"
	StateHalt      = "Halt"
	StateReady     = "Ready"
)

// Flags, as HMS spells them on the wire.
const (
	FlagUnknown = "Unknown"
	FlagOK      = "OK"
	FlagWarning = "Warning"
	FlagAlert   = "Alert"
	FlagLocked  = "Locked"
)

// NodeMap is a default NID/Role/SubRole for a node xname, applied when the
// component is first created without them.
type NodeMap struct {
	ID      string `json:"ID"`
	NID     int    `json:"NID"`
	Role    string `json:"Role,omitempty"`
	SubRole string `json:"SubRole,omitempty"`
}

// Response is HMS's small success body ({"code":0,"message":"..."}). The HSM
// swagger types code as a string; the shipped service sends the integer 0
// (hms-messages.md section 4), which is what clients parse.
type Response struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// NodeMapList is the body of GET and POST /Defaults/NodeMaps.
type NodeMapList struct {
	NodeMaps []NodeMap `json:"NodeMaps"`
}

// ResourceURI points at a created resource, as HSM returns it from POSTs.
type ResourceURI struct {
	URI string `json:"URI"`
}
