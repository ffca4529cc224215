// Package sls holds the wire types of the System Layout Service API (base
// path /v1): hardware objects with their typed ExtraProperties, networks,
// the version counter and the dump /dumpstate returns and /loadstate takes,
// and the /search/hardware query. It is a leaf: clients of SLS (HSM, reds,
// nodes, the hms CLI) import it and layout/client without linking the
// server, its store or SQLite.
package sls

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
)

// Base is the path prefix of the SLS API.
const Base = "/v1"

// Class is the hardware class of an SLS object: River (standard rack),
// Mountain or Hill (liquid-cooled).
type Class string

// The hardware classes.
const (
	River    Class = "River"
	Mountain Class = "Mountain"
	Hill     Class = "Hill"
)

// ParseClass returns the canonical Class for s, compared without regard to case.
func ParseClass(s string) (Class, error) {
	for _, c := range []Class{River, Mountain, Hill} {
		if strings.EqualFold(s, string(c)) {
			return c, nil
		}
	}
	return "", problem.Invalidf("Class %q: must be River, Mountain or Hill", s)
}

// Hardware is one SLS hardware object as it travels on the wire.
type Hardware struct {
	// Parent is the xname of the parent component (derived; "s0" for cabinets).
	Parent string `json:"Parent"`
	// Children are the stored objects whose Parent is this object (derived).
	Children []string `json:"Children,omitempty"`
	// Xname is the normalised component name.
	Xname string `json:"Xname"`
	// Type is the SLS comptype_* name of the xname's type (derived).
	Type string `json:"Type"`
	// Class is River, Mountain or Hill.
	Class Class `json:"Class"`
	// TypeString is the HMS type of the xname, such as "Node" (derived).
	TypeString xname.Type `json:"TypeString"`
	// LastUpdated is the Unix time of the last change (derived).
	LastUpdated int64 `json:"LastUpdated,omitempty"`
	// LastUpdatedTime is LastUpdated in a human-readable form (derived).
	LastUpdatedTime string `json:"LastUpdatedTime,omitempty"`
	// ExtraProperties holds the type-specific properties as a JSON object;
	// decode it with Node, Switch, Connector, BMC or Cabinet.
	ExtraProperties json.RawMessage `json:"ExtraProperties,omitempty"`
}

// NodeProps are the ExtraProperties of a Node or VirtualNode. HSM takes its
// default NID, Role and SubRole from here.
type NodeProps struct {
	NID     int      `json:"NID"`
	Role    string   `json:"Role,omitempty"`
	SubRole string   `json:"SubRole,omitempty"`
	Aliases []string `json:"Aliases,omitempty"`
}

// SwitchProps are the ExtraProperties of a management switch. The passwords may
// be vault:// references; they are never logged.
type SwitchProps struct {
	IP4addr          string   `json:"IP4addr,omitempty"`
	IP6addr          string   `json:"IP6addr,omitempty"`
	Brand            string   `json:"Brand,omitempty"`
	Model            string   `json:"Model,omitempty"`
	SNMPUsername     string   `json:"SNMPUsername,omitempty"`
	SNMPAuthPassword string   `json:"SNMPAuthPassword,omitempty"`
	SNMPAuthProtocol string   `json:"SNMPAuthProtocol,omitempty"`
	SNMPPrivPassword string   `json:"SNMPPrivPassword,omitempty"`
	SNMPPrivProtocol string   `json:"SNMPPrivProtocol,omitempty"`
	Aliases          []string `json:"Aliases,omitempty"`
}

// ConnectorProps are the ExtraProperties of a management switch port
// (MgmtSwitchConnector): the BMCs cabled to it and the switch's name for the port.
type ConnectorProps struct {
	NodeNics   []string `json:"NodeNics"`
	VendorName string   `json:"VendorName,omitempty"`
}

// BMCProps are the ExtraProperties of a BMC or PDU controller.
type BMCProps struct {
	IP4addr  string   `json:"IP4addr,omitempty"`
	IP6addr  string   `json:"IP6addr,omitempty"`
	Username string   `json:"Username,omitempty"`
	Password string   `json:"Password,omitempty"`
	Aliases  []string `json:"Aliases,omitempty"`
}

// CabinetProps are the ExtraProperties of a cabinet. Networks is keyed by
// "cn"/"ncn" and then by network name ("HMN", "NMN").
type CabinetProps struct {
	Model             string                               `json:"Model,omitempty"`
	Networks          map[string]map[string]CabinetNetwork `json:"Networks,omitempty"`
	DHCPRelaySwitches []string                             `json:"DHCPRelaySwitches,omitempty"`
}

// CabinetNetwork is one network of a cabinet. MEDS derives BMC MAC addresses
// from MACPrefix.
type CabinetNetwork struct {
	CIDR       string `json:"CIDR,omitempty"`
	Gateway    string `json:"Gateway,omitempty"`
	VLan       int    `json:"VLan,omitempty"`
	IPv6Prefix string `json:"IPv6Prefix,omitempty"`
	MACPrefix  string `json:"MACPrefix,omitempty"`
}

// ModuleProps are the ExtraProperties of a compute or router module. The JSON
// name PowerConenctor is misspelt in HMS and kept for compatibility.
type ModuleProps struct {
	PowerConnector []string `json:"PowerConenctor,omitempty"`
}

// Node decodes h.ExtraProperties as NodeProps.
func (h Hardware) Node() (NodeProps, error) { var p NodeProps; return p, h.decode(&p) }

// Switch decodes h.ExtraProperties as SwitchProps.
func (h Hardware) Switch() (SwitchProps, error) { var p SwitchProps; return p, h.decode(&p) }

// Connector decodes h.ExtraProperties as ConnectorProps.
func (h Hardware) Connector() (ConnectorProps, error) { var p ConnectorProps; return p, h.decode(&p) }

// BMC decodes h.ExtraProperties as BMCProps.
func (h Hardware) BMC() (BMCProps, error) { var p BMCProps; return p, h.decode(&p) }

// Cabinet decodes h.ExtraProperties as CabinetProps.
func (h Hardware) Cabinet() (CabinetProps, error) { var p CabinetProps; return p, h.decode(&p) }

// Module decodes h.ExtraProperties as ModuleProps.
func (h Hardware) Module() (ModuleProps, error) { var p ModuleProps; return p, h.decode(&p) }

func (h Hardware) decode(v any) error {
	if len(h.ExtraProperties) == 0 {
		return nil
	}
	if err := json.Unmarshal(h.ExtraProperties, v); err != nil {
		return fmt.Errorf("hardware %s: ExtraProperties: %w", h.Xname, err)
	}
	return nil
}

// Network is one SLS network, such as HMN or NMN.
type Network struct {
	Name            string          `json:"Name"`
	FullName        string          `json:"FullName"`
	IPRanges        []string        `json:"IPRanges"`
	Type            string          `json:"Type"`
	LastUpdated     int64           `json:"LastUpdated,omitempty"`
	LastUpdatedTime string          `json:"LastUpdatedTime,omitempty"`
	ExtraProperties json.RawMessage `json:"ExtraProperties,omitempty"`
}

// Version tells clients whether anything changed: Counter grows by one on
// every write, LastUpdated is the time of the last one (the Unix epoch if none).
type Version struct {
	Counter     int64  `json:"Counter"`
	LastUpdated string `json:"LastUpdated"`
}

// Dump is the whole SLS state as /dumpstate returns it and /loadstate takes it.
type Dump struct {
	Hardware map[string]Hardware `json:"Hardware"`
	Networks map[string]Network  `json:"Networks"`
}

// ExtraPrefix starts a /search/hardware query parameter that searches one
// ExtraProperties field, e.g. extra_properties.Role=Compute.
const ExtraPrefix = "extra_properties."

// HardwareSearch is a /search/hardware query; empty fields are left out.
// Extra maps ExtraProperties field names to values, e.g. {"VendorName": "ethernet1/1/36"}.
type HardwareSearch struct {
	Xname, Parent, Class, Type, NodeNics, PowerConnector, Peers, Networks string
	Extra                                                                 map[string]string
}

// Values returns the query parameters of s.
func (s HardwareSearch) Values() url.Values {
	v := url.Values{}
	for k, val := range map[string]string{"xname": s.Xname, "parent": s.Parent, "class": s.Class, "type": s.Type,
		"node_nics": s.NodeNics, "power_connector": s.PowerConnector, "peers": s.Peers, "networks": s.Networks} {
		if val != "" {
			v.Set(k, val)
		}
	}
	for k, val := range s.Extra {
		v.Set(ExtraPrefix+k, val)
	}
	return v
}

// NetworkProps are the ExtraProperties of a Network that SLS defines. Unknown
// fields are kept as sent.
type NetworkProps struct {
	CIDR               string   `json:"CIDR,omitempty"`
	CIDR6              string   `json:"CIDR6,omitempty"`
	VlanRange          []int    `json:"VlanRange,omitempty"`
	MTU                int      `json:"MTU,omitempty"`
	Comment            string   `json:"Comment,omitempty"`
	PeerASN            int      `json:"PeerASN,omitempty"`
	MyASN              int      `json:"MyASN,omitempty"`
	SystemDefaultRoute string   `json:"SystemDefaultRoute,omitempty"`
	Subnets            []Subnet `json:"Subnets,omitempty"`
}

// Subnet is one subnet of a network; DHCP and DNS servers are configured from it.
type Subnet struct {
	Name             string          `json:"Name"`
	FullName         string          `json:"FullName,omitempty"`
	CIDR             string          `json:"CIDR"`
	CIDR6            string          `json:"CIDR6,omitempty"`
	VlanID           int             `json:"VlanID"`
	Gateway          string          `json:"Gateway,omitempty"`
	Gateway6         string          `json:"Gateway6,omitempty"`
	DHCPStart        string          `json:"DHCPStart,omitempty"`
	DHCPEnd          string          `json:"DHCPEnd,omitempty"`
	ReservationStart string          `json:"ReservationStart,omitempty"`
	ReservationEnd   string          `json:"ReservationEnd,omitempty"`
	MetalLBPoolName  string          `json:"MetalLBPoolName,omitempty"`
	Comment          string          `json:"Comment,omitempty"`
	IPReservations   []IPReservation `json:"IPReservations,omitempty"`
}

// IPReservation is a fixed address in a subnet.
type IPReservation struct {
	Name       string   `json:"Name"`
	IPAddress  string   `json:"IPAddress"`
	IPAddress6 string   `json:"IPAddress6,omitempty"`
	Aliases    []string `json:"Aliases,omitempty"`
	Comment    string   `json:"Comment,omitempty"`
}

// Props decodes n.ExtraProperties.
func (n Network) Props() (NetworkProps, error) {
	var p NetworkProps
	if len(n.ExtraProperties) == 0 {
		return p, nil
	}
	err := json.Unmarshal(n.ExtraProperties, &p)
	return p, err
}
