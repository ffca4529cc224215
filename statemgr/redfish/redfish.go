// Package redfish walks the Redfish tree of one BMC (a RedfishEndpoint in HSM
// terms) and turns what it finds into the records HSM keeps: Components,
// ComponentEndpoints, ServiceEndpoints, hardware inventory by location and by
// FRU, and EthernetInterfaces. JSON field names are the ones the shipped HSM
// puts on the wire, so HSM can store and serve these values as they are.
//
// The walk is read-only (GETs only), bounded in time and in concurrent
// requests per BMC, closes every response body, and treats optional resources
// that a BMC omits as missing rather than as a failure.
//
// Names derive from the endpoint's xname, as HSM derives them. Behind a NodeBMC
// such as x3000c0s1b0, Systems sorted by @odata.id become nodes x3000c0s1b0n0,
// n1, ...; below node n0, CPUs become p0, p1, ... and GPUs a0, a1, ... (each
// sorted by @odata.id), Memory d0, d1, ..., and each distinct MAC of the
// system's EthernetInterfaces a NodeNic i0, i1, .... Chassis become
// NodeEnclosures of the slot, x3000c0s1e0, e1, .... The first Manager of type
// BMC is the NodeBMC itself; further Managers are listed in Result.Skipped.
// Behind other controller types only the Manager is mapped for now.
//
// States: a node is On or Off from PowerState (Empty if absent); a part is
// Populated, or Empty when its Status.State is Absent; the BMC, which just
// answered, is Ready.
package redfish

import (
	"crypto/x509"
	"net/http"
	"time"
)

// Status is the outcome of a walk, stored by HSM as a RedfishEndpoint's
// DiscoveryInfo.LastDiscoveryStatus. The values are HSM's spellings.
type Status string

// Discovery statuses. HSM itself also uses DiscoveryStarted and StoreFailed,
// which describe its own bookkeeping rather than the outcome of a walk.
const (
	// StatusOK means the walk completed; optional resources may still be
	// listed in Result.Missing.
	StatusOK Status = "DiscoverOK"
	// StatusEndpointInvalid means the endpoint cannot be walked at all: its ID
	// is not a controller xname or it has no usable address.
	StatusEndpointInvalid Status = "EndpointInvalid"
	// StatusHTTPsGetFailed means a required GET failed: connection refused,
	// timeout, TLS failure or an unexpected HTTP status.
	StatusHTTPsGetFailed Status = "HTTPsGetFailed"
	// StatusDecodeFailed means a required response was not valid Redfish JSON.
	StatusDecodeFailed Status = "EPResponseFailedDecode"
	// StatusVerificationFailed means the BMC refused the credentials (HTTP 401
	// or 403).
	StatusVerificationFailed Status = "VerificationFailed"
	// StatusChildVerificationFailed means the service root was read but a
	// System or Manager below it could not be read.
	StatusChildVerificationFailed Status = "ChildVerificationFailed"
	// StatusNotYetQueried is the status of an endpoint never walked.
	StatusNotYetQueried Status = "NotYetQueried"
	// StatusDiscoveryStarted is what HSM records while a walk runs.
	StatusDiscoveryStarted Status = "DiscoveryStarted"
)

// Endpoint says how to reach one BMC.
type Endpoint struct {
	// ID is the xname of the BMC, e.g. x3000c0s1b0. Child xnames derive from it.
	ID string
	// FQDN is the host name, optionally with ":port". It wins over IPAddress.
	FQDN string
	// IPAddress is used when FQDN is empty; IPv6 literals may omit brackets.
	IPAddress string
	// User and Password are sent with HTTP basic auth. They are never
	// logged nor put in errors.
	User     string
	Password string
	// Scheme is "https" (the default when empty) or "http".
	Scheme string
	// RootCAs, when set, verifies the BMC certificate against this pool;
	// when nil the certificate is not checked, as HSM does by default.
	RootCAs *x509.CertPool
}

// Options bound a walk. The zero value is usable.
type Options struct {
	// Timeout caps the whole walk of one BMC (default 30 s).
	Timeout time.Duration
	// MaxConcurrentRequests caps the requests in flight to one BMC, counted
	// from sending a request to closing its response body (default 4).
	MaxConcurrentRequests int
	// HTTPClient, when set, supplies the base transport (its TLS settings
	// then win over Endpoint.RootCAs). Its own Timeout is ignored; use Timeout.
	HTTPClient *http.Client
}

// Defaults used for zero Options fields.
const (
	DefaultTimeout               = 30 * time.Second
	DefaultMaxConcurrentRequests = 4
)

// Result is everything one walk learned. Slices are sorted by ID (or MAC, or
// RedfishType) so that two walks of the same tree compare equal.
type Result struct {
	// EndpointID is the xname of the walked BMC.
	EndpointID string `json:"EndpointID"`
	// Status is the LastDiscoveryStatus to record.
	Status Status `json:"Status"`
	// RedfishVersion and UUID come from the service root.
	RedfishVersion string `json:"RedfishVersion,omitempty"`
	UUID           string `json:"UUID,omitempty"`

	Components         []Component         `json:"Components"`
	ComponentEndpoints []ComponentEndpoint `json:"ComponentEndpoints"`
	ServiceEndpoints   []ServiceEndpoint   `json:"ServiceEndpoints"`
	HWInventory        []HWInvByLoc        `json:"HWInventory"`
	EthernetInterfaces []EthernetInterface `json:"EthernetInterfaces"`

	// Errors lists what made the walk fail, one line each, without secrets.
	Errors []string `json:"Errors,omitempty"`
	// Missing lists optional resources the BMC did not provide (no link, or
	// 404 on the link): "<parent @odata.id>: <resource> (<why>)".
	Missing []string `json:"Missing,omitempty"`
	// Skipped lists Redfish resources that have no place under this
	// endpoint's xname (e.g. a second Manager behind a NodeBMC).
	Skipped []string `json:"Skipped,omitempty"`
	// Requests is the number of HTTP requests the walk sent.
	Requests int `json:"Requests"`
}

// Component is an HSM component the walk found (HSM's ComponentCreate).
type Component struct {
	ID      string `json:"ID"`
	Type    string `json:"Type"`
	State   string `json:"State,omitempty"`
	Flag    string `json:"Flag,omitempty"`
	Enabled *bool  `json:"Enabled,omitempty"`
	NetType string `json:"NetType,omitempty"`
	Arch    string `json:"Arch,omitempty"`
	Class   string `json:"Class,omitempty"`
}

// HSM component states and flag set by discovery.
const (
	StateOn        = "On"
	StateOff       = "Off"
	StateReady     = "Ready"
	StatePopulated = "Populated"
	StateEmpty     = "Empty"
	StateUnknown   = "Unknown"
	FlagOK         = "OK"
)

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

// EthernetInterface is a MAC address HSM hands to DHCP/DNS (CompEthInterface).
type EthernetInterface struct {
	// ID is the MAC in lower case without separators, as HSM keys it.
	ID          string          `json:"ID"`
	Description string          `json:"Description,omitempty"`
	MACAddress  string          `json:"MACAddress"`
	IPAddresses []IPAddressInfo `json:"IPAddresses"`
	ComponentID string          `json:"ComponentID,omitempty"`
	Type        string          `json:"Type,omitempty"`
}

// IPAddressInfo is one IP address of an EthernetInterface.
type IPAddressInfo struct {
	IPAddress string `json:"IPAddress"`
	Network   string `json:"Network,omitempty"`
}
