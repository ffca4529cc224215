// Package wire holds the wire types of reds (package discovery): the JSON
// bodies of GET /v1/unknown and GET /v1/endpoints as the daemon, its client
// and `hms get unknown` read and write them. It links no server, database or
// HTTP code.
package wire

import "time"

// The reasons a MAC is unknown (Unknown.Reason); see docs/discovery.md.
const (
	ReasonNotOnAnySwitch = "not_on_any_switch"
	ReasonNoConnector    = "no_connector"
	ReasonOnTwoPorts     = "on_two_ports"
	ReasonSNMPFailed     = "snmp_failed"
	ReasonSLSFailed      = "sls_failed"
	ReasonBMCRefused     = "bmc_refused"
	ReasonBMCUnreachable = "bmc_unreachable"
	ReasonHSMFailed      = "hsm_failed"
	// ReasonInHSMOnly is never reds': `hms get unknown`, when reds cannot
	// be reached, lists HSM's Ethernet interfaces with no component in
	// this shape, with this reason.
	ReasonInHSMOnly = "in_hsm_only"
)

// Unknown is a MAC reds has not placed yet and why: one element of GET
// /v1/unknown.
type Unknown struct {
	MACAddress  string    `json:"MACAddress"`
	IPAddress   string    `json:"IPAddress"`
	Reason      string    `json:"Reason"`
	Detail      string    `json:"Detail"`
	Switch      string    `json:"Switch,omitempty"`
	Port        string    `json:"Port,omitempty"`
	Xname       string    `json:"Xname,omitempty"`
	Attempts    int       `json:"Attempts"`
	LastAttempt time.Time `json:"LastAttempt"`
	NextAttempt time.Time `json:"NextAttempt"`
	// Deferred is a MAC on no switch still in its grace (listed only with
	// ?deferred=true): HSM may yet name it, a node's NIC.
	Deferred bool `json:"Deferred,omitempty"`
}

// UnknownList is the body of GET /v1/unknown.
type UnknownList struct {
	Unknown []Unknown `json:"Unknown"`
}

// Endpoint is an endpoint as GET /v1/endpoints shows it: never a password.
type Endpoint struct {
	Xname      string    `json:"Xname"`
	Kind       string    `json:"Kind"`
	MACAddress string    `json:"MACAddress"`
	IPAddress  string    `json:"IPAddress"`
	FQDN       string    `json:"FQDN"`
	User       string    `json:"User"`
	State      string    `json:"State"`
	Updated    time.Time `json:"Updated"`
}

// EndpointList is the body of GET /v1/endpoints.
type EndpointList struct {
	Endpoints []Endpoint `json:"Endpoints"`
}
