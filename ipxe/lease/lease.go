// Package lease is the contract between the boot chain's DHCP server
// (ipxe/dhcp) and its consumers (discovery): the lease event it publishes on
// the bus each time it hands out, releases or expires an address (renewals
// only as Commit says).
// It is a leaf package so consumers need not link the DHCP server.
package lease

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"
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
	Commit  Kind = "commit"  // address handed out (DHCPACK of a new binding or address; of a renewal only for a MAC HSM does not know, at most once per half lease time)
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
func Encode(e Event) ([]byte, error) { return Append(nil, e) }

// Append appends e as Encode marshals it to b. It writes the JSON by hand,
// byte for byte what encoding/json writes (FuzzAppendIsJSON checks): the
// DHCP server encodes an event per lease, and reflection was a tenth of its
// CPU in a storm.
func Append(b []byte, e Event) ([]byte, error) {
	if !jsonTime(e.Expires) || !jsonTime(e.Time) {
		j, err := json.Marshal(e) // the error encoding/json gives
		return append(b, j...), err
	}
	b = appendField(b, `{"Kind":`, string(e.Kind))
	b = appendField(b, `,"MACAddress":`, e.MACAddress)
	b = appendField(b, `,"IPAddress":`, e.IPAddress)
	for _, f := range [...]struct{ name, v string }{{`,"Hostname":`, e.Hostname}, {`,"VendorClass":`, e.VendorClass},
		{`,"Arch":`, e.Arch}, {`,"Subnet":`, e.Subnet}, {`,"Relay":`, e.Relay}} {
		if f.v != "" {
			b = appendField(b, f.name, f.v)
		}
	}
	b = append(b, `,"Known":`...)
	b = strconv.AppendBool(b, e.Known)
	b = appendTime(append(b, `,"Expires":`...), e.Expires) // omitempty does not omit a struct
	b = appendTime(append(b, `,"Time":`...), e.Time)
	return append(b, '}'), nil
}

// jsonTime reports whether t is written here: in UTC (the server's
// events are; encoding/json writes other zones and refuses some) and of a
// year encoding/json marshals (0-9999).
func jsonTime(t time.Time) bool {
	y := t.Year()
	return t.Location() == time.UTC && y >= 0 && y <= 9999
}

func appendTime(b []byte, t time.Time) []byte {
	return append(t.AppendFormat(append(b, '"'), time.RFC3339Nano), '"')
}

// appendField appends name and s as a JSON string, escaped as encoding/json
// escapes it (HTML characters included).
func appendField(b []byte, name, s string) []byte {
	b = append(b, name...)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			j, _ := json.Marshal(s) // a string always marshals
			return append(b, j...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

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
