package hsm

// ComponentEndpoint is HSM's record of how to reach a component over Redfish.
// Exactly one of the *Info fields is set, matching ComponentEndpointType.
type ComponentEndpoint struct {
	ID                    string       `json:"ID"`
	Type                  string       `json:"Type"`
	Domain                string       `json:"Domain"`
	FQDN                  string       `json:"FQDN"`
	RedfishType           string       `json:"RedfishType"`
	RedfishSubtype        string       `json:"RedfishSubtype"`
	Enabled               bool         `json:"Enabled"`
	MACAddr               string       `json:"MACAddr,omitempty"`
	UUID                  string       `json:"UUID,omitempty"`
	OdataID               string       `json:"OdataID"`
	RedfishEndpointID     string       `json:"RedfishEndpointID"`
	RedfishEndpointFQDN   string       `json:"RedfishEndpointFQDN"`
	RedfishURL            string       `json:"RedfishURL"`
	ComponentEndpointType string       `json:"ComponentEndpointType"`
	RedfishChassisInfo    *ChassisInfo `json:"RedfishChassisInfo,omitempty"`
	RedfishSystemInfo     *SystemInfo  `json:"RedfishSystemInfo,omitempty"`
	RedfishManagerInfo    *ManagerInfo `json:"RedfishManagerInfo,omitempty"`
}

// ComponentEndpointType values.
const (
	CETypeChassis        = "ComponentEndpointChassis"
	CETypeComputerSystem = "ComponentEndpointComputerSystem"
	CETypeManager        = "ComponentEndpointManager"
)

// ResetAction is a Redfish reset action as HSM passes it through: the POST
// target and the allowed ResetType values.
type ResetAction struct {
	AllowableValues []string `json:"ResetType@Redfish.AllowableValues"`
	Target          string   `json:"target"`
}

// SystemActions holds a ComputerSystem's actions (only Reset is kept).
type SystemActions struct {
	Reset *ResetAction `json:"#ComputerSystem.Reset,omitempty"`
}

// ChassisActions holds a Chassis's actions (only Reset is kept).
type ChassisActions struct {
	Reset *ResetAction `json:"#Chassis.Reset,omitempty"`
}

// ManagerActions holds a Manager's actions (only Reset is kept).
type ManagerActions struct {
	Reset *ResetAction `json:"#Manager.Reset,omitempty"`
}

// SystemInfo is RedfishSystemInfo: what power services need to control a node.
type SystemInfo struct {
	Name            string         `json:"Name"`
	Actions         *SystemActions `json:"Actions,omitempty"`
	EthernetNICInfo []NICInfo      `json:"EthernetNICInfo,omitempty"`
	PowerURL        string         `json:"PowerURL,omitempty"`
	PowerControl    []PowerControl `json:"PowerControl,omitempty"`
}

// ChassisInfo is RedfishChassisInfo.
type ChassisInfo struct {
	Name    string          `json:"Name"`
	Actions *ChassisActions `json:"Actions,omitempty"`
}

// ManagerInfo is RedfishManagerInfo.
type ManagerInfo struct {
	Name            string          `json:"Name"`
	Actions         *ManagerActions `json:"Actions,omitempty"`
	EthernetNICInfo []NICInfo       `json:"EthernetNICInfo,omitempty"`
}

// NICInfo summarises one Redfish EthernetInterface (HSM's EthernetNICInfo).
type NICInfo struct {
	RedfishID           string `json:"RedfishId"`
	OdataID             string `json:"@odata.id"`
	Description         string `json:"Description,omitempty"`
	FQDN                string `json:"FQDN,omitempty"`
	Hostname            string `json:"Hostname,omitempty"`
	InterfaceEnabled    *bool  `json:"InterfaceEnabled,omitempty"`
	MACAddress          string `json:"MACAddress"`
	PermanentMACAddress string `json:"PermanentMACAddress,omitempty"`
}

// PowerControl is one entry of a chassis Power resource's PowerControl array.
type PowerControl struct {
	Name               string        `json:"Name,omitempty"`
	PowerCapacityWatts *float64      `json:"PowerCapacityWatts,omitempty"`
	RelatedItem        []ODataIDLink `json:"RelatedItem,omitempty"`
}

// ODataIDLink is a Redfish reference, {"@odata.id": "..."}.
type ODataIDLink struct {
	OdataID string `json:"@odata.id"`
}

// ServiceEndpoint is a Redfish service (AccountService, EventService, ...)
// found on the BMC.
type ServiceEndpoint struct {
	RedfishEndpointID   string      `json:"RedfishEndpointID"`
	RedfishType         string      `json:"RedfishType"`
	RedfishSubtype      string      `json:"RedfishSubtype,omitempty"`
	UUID                string      `json:"UUID,omitempty"`
	OdataID             string      `json:"OdataID"`
	RedfishEndpointFQDN string      `json:"RedfishEndpointFQDN"`
	RedfishURL          string      `json:"RedfishURL"`
	ServiceInfo         ServiceInfo `json:"ServiceInfo"`
}

// ServiceInfo is the service-specific part of a ServiceEndpoint.
type ServiceInfo struct {
	Name string `json:"Name,omitempty"`
}
