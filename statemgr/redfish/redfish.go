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
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"time"

	"github.com/hmsuite/hms/statemgr/hsm"
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
	// SessionCache, when set, keeps the TLS sessions of the walks that
	// share it, so that a walk's second and later connections to a BMC (and
	// the next walk of it) resume instead of doing a full handshake. Without
	// it each walk keeps its own. Sessions are resumed only when
	// certificates are not checked (Endpoint.RootCAs nil).
	SessionCache tls.ClientSessionCache
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

	Components         []hsm.Component         `json:"Components"`
	ComponentEndpoints []hsm.ComponentEndpoint `json:"ComponentEndpoints"`
	ServiceEndpoints   []hsm.ServiceEndpoint   `json:"ServiceEndpoints"`
	HWInventory        []hsm.HWInvByLoc        `json:"HWInventory"`
	EthernetInterfaces []hsm.EthernetInterface `json:"EthernetInterfaces"`

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
