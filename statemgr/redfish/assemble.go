package redfish

import (
	"cmp"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/stmcginnis/gofish/schemas"
)

// add appends records to the result.
func (w *walker) add(p parts, ses ...hsm.ServiceEndpoint) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.res
	r.Components = append(r.Components, p.comps...)
	r.ComponentEndpoints = append(r.ComponentEndpoints, p.ces...)
	r.HWInventory = append(r.HWInventory, p.inv...)
	r.EthernetInterfaces = append(r.EthernetInterfaces, p.eths...)
	r.ServiceEndpoints = append(r.ServiceEndpoints, ses...)
}

// finish sorts every list, merges EthernetInterfaces seen twice (a VLAN
// interface shares its parent's MAC) and turns nil lists into empty ones, so
// that results compare and encode the same way every time.
func (w *walker) finish() {
	r := w.res
	slices.SortFunc(r.Components, func(a, b hsm.Component) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(r.ComponentEndpoints, func(a, b hsm.ComponentEndpoint) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(r.HWInventory, func(a, b hsm.HWInvByLoc) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(r.ServiceEndpoints, func(a, b hsm.ServiceEndpoint) int { return cmp.Compare(a.RedfishType, b.RedfishType) })
	r.EthernetInterfaces = mergeEthernet(r.EthernetInterfaces)
	sortStrings(r.Errors)
	sortStrings(r.Missing)
	sortStrings(r.Skipped)
	if r.Components == nil {
		r.Components = []hsm.Component{}
	}
	if r.ComponentEndpoints == nil {
		r.ComponentEndpoints = []hsm.ComponentEndpoint{}
	}
	if r.HWInventory == nil {
		r.HWInventory = []hsm.HWInvByLoc{}
	}
	if r.ServiceEndpoints == nil {
		r.ServiceEndpoints = []hsm.ServiceEndpoint{}
	}
}

// mergeEthernet keeps one EthernetInterface per MAC: the one of the
// component that sorts first, with the IP addresses of all of them.
func mergeEthernet(in []hsm.EthernetInterface) []hsm.EthernetInterface {
	slices.SortStableFunc(in, func(a, b hsm.EthernetInterface) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.ComponentID, b.ComponentID))
	})
	out := []hsm.EthernetInterface{}
	for _, e := range in {
		if n := len(out); n > 0 && out[n-1].ID == e.ID {
			for _, ip := range e.IPAddresses {
				if !slices.Contains(out[n-1].IPAddresses, ip) {
					out[n-1].IPAddresses = append(out[n-1].IPAddresses, ip)
				}
			}
			continue
		}
		out = append(out, e)
	}
	return out
}

// nics summarises EthernetInterfaces of owner and records an
// EthernetInterface per MAC; for a node it also records NodeNic components
// (xXcCsSbBnNiI), one per distinct MAC.
func (w *walker) nics(p *parts, owner string, ownerType xname.Type, list []*schemas.EthernetInterface, nodeNics bool) []hsm.NICInfo {
	sortByODataID(list, func(e *schemas.EthernetInterface) string { return e.ODataID })
	var out []hsm.NICInfo
	seen := map[string]bool{}
	for _, e := range list {
		x, _ := parseExtras(e.RawData, "") // gofish decoded it already; only InterfaceEnabled is read here.
		out = append(out, hsm.NICInfo{RedfishID: e.ID, OdataID: e.ODataID, Description: e.Description, FQDN: e.FQDN,
			Hostname: e.HostName, InterfaceEnabled: x.InterfaceEnabled, MACAddress: e.MACAddress,
			PermanentMACAddress: e.PermanentMACAddress})
		mac := normMAC(e.MACAddress)
		if mac == "" {
			mac = normMAC(e.PermanentMACAddress)
		}
		if mac == "" {
			continue
		}
		eth := hsm.EthernetInterface{ID: strings.ReplaceAll(mac, ":", ""), Description: e.Description, MACAddress: mac,
			IPAddresses: []hsm.IPAddressMapping{}, ComponentID: owner, Type: string(ownerType)}
		for _, a := range e.IPv4Addresses {
			if ip := net.ParseIP(a.Address); ip != nil && !ip.IsUnspecified() {
				eth.IPAddresses = append(eth.IPAddresses, hsm.IPAddressMapping{IPAddress: ip.String()})
			}
		}
		p.eths = append(p.eths, eth)
		if nodeNics && !seen[mac] {
			id := owner + "i" + strconv.Itoa(len(seen))
			p.comps = append(p.comps, hsm.Component{ID: id, Type: string(xname.NodeNic), State: fruState(e.Status),
				Flag: hsm.FlagOK, Enabled: ptr(true)})
		}
		seen[mac] = true
	}
	return out
}

// normMAC returns mac as lower-case colon-separated hex, or "" if it is not
// a non-zero 6-byte MAC.
func normMAC(mac string) string {
	hw, err := net.ParseMAC(strings.TrimSpace(mac))
	if err != nil || len(hw) != 6 || slices.Equal(hw, make(net.HardwareAddr, 6)) {
		return ""
	}
	return hw.String()
}

// firstMAC returns the first usable MAC of nics, normalised.
func firstMAC(nics []hsm.NICInfo) string {
	for _, n := range nics {
		if m := normMAC(n.MACAddress); m != "" {
			return m
		}
		if m := normMAC(n.PermanentMACAddress); m != "" {
			return m
		}
	}
	return ""
}

// componentEndpoint fills the fields every ComponentEndpoint shares.
func (w *walker) componentEndpoint(id string, t xname.Type, rfType, rfSubtype, uuid, odataID string) hsm.ComponentEndpoint {
	fqdn := id
	if w.domain != "" {
		fqdn = id + "." + w.domain
	}
	return hsm.ComponentEndpoint{ID: id, Type: string(t), Domain: w.domain, FQDN: fqdn, RedfishType: rfType,
		RedfishSubtype: rfSubtype, Enabled: true, UUID: uuid, OdataID: odataID, RedfishEndpointID: w.bmcID,
		RedfishEndpointFQDN: w.fqdn, RedfishURL: w.fqdn + odataID}
}

// fruState is Empty for an absent part and Populated otherwise.
func fruState(s schemas.Status) string {
	if s.State == schemas.AbsentState {
		return hsm.StateEmpty
	}
	return hsm.StatePopulated
}

// powerState maps a Redfish PowerState to an HSM state; a transition is
// reported as the state it leaves, since it has not been reached yet.
func powerState(p schemas.PowerState, s schemas.Status) string {
	if s.State == schemas.AbsentState {
		return hsm.StateEmpty
	}
	switch p {
	case schemas.OnPowerState, schemas.PoweringOffPowerState:
		return hsm.StateOn
	case schemas.OffPowerState, schemas.PoweringOnPowerState:
		return hsm.StateOff
	}
	return hsm.StateUnknown
}

// FRUID is the FRU ID HSM gives a part: <Type>.<Manufacturer>.<PartNumber>.<SerialNumber>
// (blanks in each as "_"), or FRUIDfor<xname> when it has no serial number.
func FRUID(t xname.Type, id, manufacturer, part, serial string) string {
	if strings.TrimSpace(serial) == "" {
		return "FRUIDfor" + id
	}
	clean := func(s string) string { return strings.Join(strings.Fields(s), "_") }
	return string(t) + "." + clean(manufacturer) + "." + clean(part) + "." + clean(serial)
}

// archOf maps a processor's architecture to HSM's Arch.
func archOf(c *schemas.Processor) string {
	a := strings.ToLower(string(c.ProcessorArchitecture))
	if a == "" {
		a = strings.ToLower(string(c.InstructionSet))
	}
	switch {
	case a == "":
		return ""
	case strings.HasPrefix(a, "x86"):
		return "X86"
	case strings.HasPrefix(a, "arm"):
		return "ARM"
	}
	return "Other"
}

// ordinalOf returns the last number of an xname (0 for b0 in x3000c0s1b0).
func ordinalOf(id string) int {
	i := len(id)
	for i > 0 && id[i-1] >= '0' && id[i-1] <= '9' {
		i--
	}
	n, _ := strconv.Atoi(id[i:])
	return n
}

func sortByODataID[T any](list []*T, key func(*T) string) {
	slices.SortStableFunc(list, func(a, b *T) int { return cmp.Compare(key(a), key(b)) })
}

func sortStrings(s []string) { slices.Sort(s) }

func ptr[T any](v T) *T { return &v }
