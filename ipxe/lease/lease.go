// Package lease is the contract between the boot chain's DHCP server
// (ipxe/dhcp) and its consumers (discovery): the lease event it publishes on
// the bus each time it hands out (not renews), releases or expires an address.
// It is a leaf package so consumers need not link the DHCP server.
package lease

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"time"
)

// Topic is the bus topic lease events are published on; the message key is
// the MAC address (lower case, colon separated), so events of one MAC stay in
// order.
const Topic = "hms-dhcp-leases"

// Kind says what happened to a lease.
type Kind string

// The lease event kinds.
const (
	Commit  Kind = "commit"  // address handed out (DHCPACK of a new binding or address; not of a renewal)
	Release Kind = "release" // client released it (DHCPRELEASE)
	Expire  Kind = "expire"  // lease time ran out without renewal
	Decline Kind = "decline" // client found the address in use (DHCPDECLINE)
)

// Event is one lease event. Known says whether the MAC belongs to a component
// HSM knows (a reservation); discovery acts on unknown ones.
type Event struct {
	Kind        Kind      `json:"Kind"`
	MACAddress  string    `json:"MACAddress"`
	IPAddress   string    `json:"IPAddress"`
	Hostname    string    `json:"Hostname,omitempty"`
	VendorClass string    `json:"VendorClass,omitempty"`
	Arch        string    `json:"Arch,omitempty"`
	Subnet      string    `json:"Subnet,omitempty"` // CIDR the address came from
	Relay       string    `json:"Relay,omitempty"`  // giaddr when relayed
	Known       bool      `json:"Known"`
	Expires     time.Time `json:"Expires,omitempty"`
	Time        time.Time `json:"Time"`
}

// Key is the bus message key of a MAC address: lower case, colon separated.
func Key(mac string) string { return NormalizeMAC(mac) }

// NormalizeMAC returns mac in lower-case colon-separated form; inputs that
// do not parse are returned lower-cased.
func NormalizeMAC(mac string) string {
	if hw, err := net.ParseMAC(mac); err == nil {
		return hw.String()
	}
	return strings.ToLower(mac)
}

// Encode marshals e for the bus.
func Encode(e Event) ([]byte, error) { return json.Marshal(e) }

// Decode unmarshals a bus message value; an event without a MAC is an error.
func Decode(b []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(b, &e); err != nil {
		return Event{}, fmt.Errorf("lease event: %w", err)
	}
	if e.MACAddress == "" {
		return Event{}, fmt.Errorf("lease event: no MACAddress")
	}
	e.MACAddress = NormalizeMAC(e.MACAddress)
	return e, nil
}
