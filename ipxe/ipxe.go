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

	"github.com/hmsuite/hms/ipxe/bss"
)

// The wire types live in the leaf package ipxe/bss, which clients import
// without linking this server; the server names them here.
type (
	BootParams     = bss.BootParams
	CloudInit      = bss.CloudInit
	PhoneHome      = bss.PhoneHome
	Image          = bss.Image
	Host           = bss.Host
	EndpointAccess = bss.EndpointAccess
	DHCPLease      = bss.DHCPLease
	ParamsQuery    = bss.ParamsQuery
	LeaseQuery     = bss.LeaseQuery
)

// The tags and the endpoints endpoint-history records (see ipxe/bss).
const (
	TagDefault         = bss.TagDefault
	TagGlobal          = bss.TagGlobal
	TagUnknownPrefix   = bss.TagUnknownPrefix
	EndpointBootscript = bss.EndpointBootscript
	EndpointUserData   = bss.EndpointUserData
)

// Entry is what is stored under one key (an xname, a tag, a MAC or nid<N>).
type Entry struct {
	Params    string
	Kernel    string // image path
	Initrd    string // image path
	CloudInit CloudInit
	// Token is the bss-referral-token of the request that wrote the entry.
	Token string
}

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
