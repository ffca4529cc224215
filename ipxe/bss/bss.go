// Package bss holds the wire types of the Boot Script Service API
// (/boot/v1, hms-bss 1.37, plus bss's DHCP lease extension): boot
// parameters with their cloud-init data, the tags, hosts, endpoint history
// and DHCP leases, and the queries of the typed client. It is a leaf:
// clients of BSS (nodes, bos, the hms CLI) import it and ipxe/client without
// linking the server, its store or SQLite.
package bss

import (
	"time"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// Base is the path prefix of the BSS API.
const Base = "/boot/v1"

// TokenHeader carries the referral token BSS answers a POST or PUT of boot
// parameters with (hms-bss's bss-referral-token).
const TokenHeader = "BSS-Referral-Token"

// Tags are host names that stand for a group of nodes rather than one.
const (
	// TagDefault is used by a known node with no entry of its own, nor of its role.
	TagDefault = "Default"
	// TagGlobal holds the cloud-init data merged into every node's meta-data.
	TagGlobal = "Global"
	// TagUnknownPrefix + an iPXE architecture (x86_64, arm64, ...) is the
	// entry an unknown node boots (the discovery image).
	TagUnknownPrefix = "Unknown-"
)

// BootParams is the body of /boot/v1/bootparameters: which hosts, MACs or
// NIDs an entry is for, and what they boot. Empty lists and strings are
// omitted; cloud-init always appears, as in hms-bss.
type BootParams struct {
	Hosts     []string  `json:"hosts,omitempty"`
	MACs      []string  `json:"macs,omitempty"`
	NIDs      []int32   `json:"nids,omitempty"`
	Params    string    `json:"params,omitempty"`
	Kernel    string    `json:"kernel,omitempty"`
	Initrd    string    `json:"initrd,omitempty"`
	CloudInit CloudInit `json:"cloud-init"`
}

// CloudInit is the cloud-init data of an entry. MetaData and UserData are
// free-form JSON objects (null when unset).
type CloudInit struct {
	MetaData  map[string]any `json:"meta-data"`
	UserData  map[string]any `json:"user-data"`
	PhoneHome PhoneHome      `json:"phone-home"`
}

// PhoneHome is what a node posted to /phone-home: its SSH host keys and
// names. Every key but pub_key_ed25519 always appears, as in hms-bss.
type PhoneHome struct {
	PublicKeyDSA     string `json:"pub_key_dsa"`
	PublicKeyRSA     string `json:"pub_key_rsa"`
	PublicKeyECDSA   string `json:"pub_key_ecdsa"`
	PublicKeyED25519 string `json:"pub_key_ed25519,omitempty"`
	InstanceID       string `json:"instance_id"`
	Hostname         string `json:"hostname"`
	FQDN             string `json:"fqdn"`
}

// isZero reports whether no field of p is set.

// Image is a kernel or initrd record: its path (URL) and the parameters
// every script booting it gets.
type Image struct {
	Path   string
	Params string
}

// Host is a node as /boot/v1/hosts and dumpstate show it: HSM's component
// plus its FQDN, MACs and whether its endpoint is enabled.
type Host struct {
	hsm.Component
	FQDN            string   `json:"FQDN"`
	MAC             []string `json:"MAC"`
	EndpointEnabled bool     `json:"EndpointEnabled"`
}

// EndpointAccess is when a node last fetched one of its boot endpoints
// (bootscript or user-data): the "did it PXE yet" signal.
type EndpointAccess struct {
	Name      string `json:"name"`
	Endpoint  string `json:"endpoint"`
	LastEpoch int64  `json:"last_epoch"`
}

// DHCPLease is one lease of bss's DHCP server, as GET /boot/v1/dhcp/leases
// shows it (an extension of the hms-bss API).
type DHCPLease struct {
	MACAddress  string    `json:"MACAddress"` // empty for a declined address
	IPAddress   string    `json:"IPAddress"`
	Subnet      string    `json:"Subnet"`
	State       string    `json:"State"` // offered, bound, declined, expired
	Expires     time.Time `json:"Expires"`
	Hostname    string    `json:"Hostname,omitempty"`    // the host name the client sent (option 12)
	ComponentID string    `json:"ComponentID,omitempty"` // the HSM node with this MAC now (bss's cache)
	Known       bool      `json:"Known"`                 // HSM knew the MAC when it was leased
	// LastExchange is when the client last asked about this lease (its
	// DISCOVER or REQUEST, renewals included); zero for a declined
	// address and leases stored by an older bss.
	LastExchange time.Time `json:"LastExchange,omitzero"`
	// Relay is the relay agent (giaddr) of that exchange; empty when the
	// client reached the server directly.
	Relay string `json:"Relay,omitempty"`
}

// The endpoints endpoint-history records.
const (
	EndpointBootscript = "bootscript"
	EndpointUserData   = "user-data"
)

// ParamsQuery is what GET bootparameters asks for.
type ParamsQuery struct {
	Names, MACs    []string
	NIDs           []int32
	Kernel, Initrd string
}

// LeaseQuery filters Leases: each field is a list of values any of which
// may match; an empty field matches every lease.
type LeaseQuery struct {
	MACs, IPs, Names, States []string
}
