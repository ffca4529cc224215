// Package ipxe is the Boot Script Service (BSS): it stores boot parameters
// (kernel, initrd, kernel command line, cloud-init data) per node, MAC, NID
// or tag, and answers each booting node's iPXE request with the script that
// names its kernel and initrd. Nodes are identified through a cache of HSM
// data (components, MACs, IPs, roles) that SCNs keep fresh; cloud-init
// meta-data and user-data are served to the node that asks, identified by
// its source IP.
//
// The wire format is the HMS BSS one (/boot/v1, hms-bss 1.37); see
// docs/bss.md. The DHCP and TFTP servers of the boot chain live in ipxe/dhcp
// and ipxe/tftp; the daemon runs them when configured (bootchain.go), and
// the DHCP server asks this package's Cache which MACs are known.
package ipxe

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

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
func (p PhoneHome) isZero() bool { return p == PhoneHome{} }

// Entry is what is stored under one key (an xname, a tag, a MAC or nid<N>).
type Entry struct {
	Params    string
	Kernel    string // image path
	Initrd    string // image path
	CloudInit CloudInit
	// Token is the bss-referral-token of the request that wrote the entry.
	Token string
}

// Image is a kernel or initrd record: its path (URL) and the parameters
// every script booting it gets.
type Image struct {
	Path   string
	Params string
}

// Host is a node as /boot/v1/hosts and dumpstate show it: HSM's component
// plus its FQDN, MACs and whether its endpoint is enabled.
type Host struct {
	Component
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

// nidKey is the key NID entries are stored under, as in hms-bss.
func nidKey(n int32) string { return "nid" + strconv.FormatInt(int64(n), 10) }

// normMAC is the stored form of a MAC: lower case, colon separated. Strings
// that are not MACs are only lower-cased (hms-bss stores whatever it is given).
func normMAC(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if len(s) == 12 && !strings.ContainsAny(s, ":-.") {
		var b strings.Builder
		for i := 0; i < 12; i += 2 {
			if i > 0 {
				b.WriteByte(':')
			}
			b.WriteString(s[i : i+2])
		}
		return b.String()
	}
	return strings.ReplaceAll(s, "-", ":")
}

// cloneObject deep-copies a JSON object so callers cannot alias stored data.
func cloneObject(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}
