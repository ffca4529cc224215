// Package dhcp is the boot chain's DHCPv4 server: authoritative for its
// subnets (directly attached or behind relays), with leases kept in bss's
// database (SQLite or PostgreSQL) across restarts, reservations for the MACs HSM knows, a short-lease pool
// for the ones it does not, and two-stage PXE (firmware gets the iPXE binary
// for its architecture over TFTP, iPXE gets its BSS boot script URL). Each
// lease change is published on the bus as a lease.Event, and each unknown MAC
// is written to HSM's EthernetInterfaces, so discovery can place it.
//
// The decisions are made by Handler, a function of the packet, the lease
// table and the HSM lookup; Server around it does the socket (its own
// batched read loop), the group-committed writes and the outbox relays.
// Shape after coredhcp: one handler chain, state injected.
//
// The hot path has its own codec: packets are parsed in place into a
// reused request (request.go) and replies encoded into pooled buffers
// (answer.go), with no options map per packet. github.com/insomniacslk/dhcp
// stays the reference and the rest: it binds the socket, parses and
// encodes on the PXE boot server port, encodes the rare reply that must be
// shed or overloaded to fit the client (encode), and is what Handle takes
// and returns; the golden and fuzz tests hold both codecs to the same
// bytes.
package dhcp

import (
	"context"
	"net"
	"net/netip"
	"time"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// Defaults.
const (
	DefaultLease        = time.Hour
	DefaultUnknownLease = 5 * time.Minute
	// OfferHold is how long an offered address is kept for the client that
	// was offered it before it may be offered to another.
	OfferHold = 30 * time.Second
)

// Subnet is one subnet the server hands out addresses on.
type Subnet struct {
	Prefix      netip.Prefix
	First, Last netip.Addr // the pool, inclusive
	Router      netip.Addr // invalid: no option 3
	DNS         []netip.Addr
	// Lease is the lease time of MACs HSM knows; UnknownLease that of the
	// others (short, so a node discovery has placed soon gets its own address).
	Lease, UnknownLease time.Duration
	// Relayed subnets are reached only through relays (giaddr); the one
	// subnet that is not is the server's own link.
	Relayed bool
}

// Contains reports whether a is in the pool.
func (s *Subnet) Contains(a netip.Addr) bool {
	return a.IsValid() && s.Prefix.Contains(a) && a.Compare(s.First) >= 0 && a.Compare(s.Last) <= 0
}

// BootFiles are the iPXE binaries named to firmware, per architecture, as
// found under the TFTP root (and served over HTTP for UEFI HTTP boot).
type BootFiles struct {
	BIOS  string // option 93 = 0: undionly.kpxe
	EFI64 string // 7, 9: ipxe.efi
	ARM64 string // 11: snp.efi
}

// DefaultBootFiles are the names of Debian's ipxe package (arm64: the name
// CSM uses; named only if present).
func DefaultBootFiles() BootFiles {
	return BootFiles{BIOS: "undionly.kpxe", EFI64: "ipxe.efi", ARM64: "snp.efi"}
}

// Config is what the handler decides with.
type Config struct {
	Subnets []Subnet
	// ServerID is the server's own address (option 54): the address on its
	// link, which relays also reach.
	ServerID netip.Addr
	// NextServer is siaddr, where firmware fetches its boot file by TFTP
	// (the advertise address; default ServerID).
	NextServer netip.Addr
	// BootURL is BSS's advertise URL: iPXE gets
	// <BootURL>/boot/v1/bootscript?mac=${net0/mac}, UEFI HTTP boot
	// <BootURL>/ipxe/<file>.
	BootURL string
	Files   BootFiles
	// Has reports whether a boot file exists (nil: all do); a missing one is
	// not named.
	Has func(name string) bool
	// Proxy: another server owns the addresses; only boot options are added
	// (ProxyDHCP), no address is offered and no lease kept.
	Proxy bool
}

// Lookup is what the server asks of BSS's HSM cache ((*ipxe.Cache) through
// a small adapter).
type Lookup interface {
	// KnownMAC returns the node HSM ties mac to and the IPv4 address HSM
	// has for that interface (invalid if none).
	KnownMAC(mac net.HardwareAddr) (xname string, ip netip.Addr, ok bool)
	// Reserved reports whether HSM gives ip to some node's interface.
	Reserved(ip netip.Addr) bool
}

// HSM is the part of HSM's client the server writes unknown MACs with
// (statemgr/client's Client is one).
type HSM interface {
	CreateEthernetInterface(ctx context.Context, ei hsm.EthernetInterface) error
}

// noLookup knows nobody.
type noLookup struct{}

func (noLookup) KnownMAC(net.HardwareAddr) (string, netip.Addr, bool) { return "", netip.Addr{}, false }
func (noLookup) Reserved(netip.Addr) bool                             { return false }
