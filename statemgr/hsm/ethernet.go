package hsm

import "time"

// IPAddressMapping is one IP address of an Ethernet interface and its network.
type IPAddressMapping struct {
	IPAddress string `json:"IPAddress"`
	Network   string `json:"Network,omitempty"`
}

// EthernetInterface maps a MAC address to IP addresses and, once known, to
// the component that owns it. An empty ComponentID is a MAC nobody has
// identified yet (DHCP saw it, discovery has not placed it).
type EthernetInterface struct {
	ID          string             `json:"ID"`
	Description string             `json:"Description"`
	MACAddress  string             `json:"MACAddress"`
	IPAddresses []IPAddressMapping `json:"IPAddresses"`
	LastUpdate  time.Time          `json:"LastUpdate"`
	ComponentID string             `json:"ComponentID"`
	Type        string             `json:"Type"`
}

// EthernetPatch is the body of PATCH /Inventory/EthernetInterfaces/{id};
// nil fields are left alone.
type EthernetPatch struct {
	Description *string             `json:"Description"`
	IPAddresses *[]IPAddressMapping `json:"IPAddresses"`
	ComponentID *string             `json:"ComponentID"`
}
