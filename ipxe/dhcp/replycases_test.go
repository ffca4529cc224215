package dhcp

import (
	"bytes"
	"net"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
)

// replyCase is a client packet and the configuration that answers it, for
// the reply golden files (testdata/reply_*.golden): the replies the server
// sent before it had its own encoder (insomniacslk's, at 5a5055b),
// byte for byte.
type replyCase struct {
	name  string
	proxy bool
	req   *dhcpv4.DHCPv4
}

func replyCases(t *testing.T) []replyCase {
	t.Helper()
	pxe := func(arch iana.Arch, class string) []dhcpv4.Modifier {
		return []dhcpv4.Modifier{dhcpv4.WithOption(dhcpv4.OptClassIdentifier(class)), withArch(arch)}
	}
	bios := pxe(iana.INTEL_X86PC, "PXEClient:Arch:00000:UNDI:002001")
	relay := []dhcpv4.Modifier{dhcpv4.WithGatewayIP(net.IPv4(10, 2, 0, 1)),
		dhcpv4.WithOption(dhcpv4.OptGeneric(dhcpv4.OptionRelayAgentInformation, []byte{1, 4, 'p', 'o', 'r', 't', 2, 2, 0xab, 0xcd}))}
	ipxe := []dhcpv4.Modifier{withArch(iana.EFI_X86_64), dhcpv4.WithOption(dhcpv4.OptUserClass("iPXE"))}
	// perfdhcp's DISCOVER: relayed, a parameter request list, nothing else.
	prl := dhcpv4.WithOption(dhcpv4.OptParameterRequestList(dhcpv4.OptionSubnetMask, dhcpv4.OptionBroadcastAddress,
		dhcpv4.OptionTimeOffset, dhcpv4.OptionRouter, dhcpv4.OptionDomainName, dhcpv4.OptionDomainNameServer, dhcpv4.OptionHostName))
	long82 := dhcpv4.WithOption(dhcpv4.OptGeneric(dhcpv4.OptionRelayAgentInformation, bytes.Repeat([]byte{1}, 200)))
	m := func(typ dhcpv4.MessageType, mac string, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
		return msg(t, typ, mac, mods...)
	}
	cat := func(l ...[]dhcpv4.Modifier) []dhcpv4.Modifier {
		var out []dhcpv4.Modifier
		for _, x := range l {
			out = append(out, x...)
		}
		return out
	}
	return []replyCase{
		{name: "bios_discover", req: m(dhcpv4.MessageTypeDiscover, "02:aa:00:00:00:01", bios...)},
		{name: "uefi_x64_discover", req: m(dhcpv4.MessageTypeDiscover, "02:aa:00:00:00:02", pxe(iana.EFI_X86_64, "PXEClient:Arch:00007:UNDI:003016")...)},
		{name: "uefi_arm64_discover", req: m(dhcpv4.MessageTypeDiscover, "02:aa:00:00:00:03", pxe(iana.EFI_ARM64, "PXEClient:Arch:00011:UNDI:003000")...)},
		{name: "efi_bc_no_class", req: m(dhcpv4.MessageTypeDiscover, "02:aa:00:00:00:04", withArch(iana.EFI_BC))},
		{name: "ipxe_discover", req: m(dhcpv4.MessageTypeDiscover, "02:aa:00:00:00:05", ipxe...)},
		{name: "httpclient_discover", req: m(dhcpv4.MessageTypeDiscover, "02:aa:00:00:00:06", pxe(iana.EFI_X86_64_HTTP, "HTTPClient:Arch:00016")...)},
		{name: "plain_discover_broadcast", req: m(dhcpv4.MessageTypeDiscover, "02:aa:00:00:00:07", dhcpv4.WithBroadcast(true))},
		{name: "relayed_discover", req: m(dhcpv4.MessageTypeDiscover, "02:aa:00:00:00:08", cat(relay, bios)...)},
		{name: "relayed_request", req: m(dhcpv4.MessageTypeRequest, "02:aa:00:00:00:08", cat(relay, bios,
			[]dhcpv4.Modifier{withRequested("10.2.0.100"), withServerID("10.1.0.1")})...)},
		{name: "perfdhcp_discover", req: m(dhcpv4.MessageTypeDiscover, "02:aa:00:00:00:09", relay[0], prl)},
		{name: "perfdhcp_request", req: m(dhcpv4.MessageTypeRequest, "02:aa:00:00:00:09", relay[0], prl, withRequested("10.2.0.100"),
			withServerID("10.1.0.1"))},
		{name: "known_mac_request", req: m(dhcpv4.MessageTypeRequest, "02:00:00:00:00:01", cat(ipxe,
			[]dhcpv4.Modifier{withRequested("10.1.0.50"), withServerID("10.1.0.1")})...)},
		{name: "renewal_request", req: m(dhcpv4.MessageTypeRequest, "02:aa:00:00:00:0a", dhcpv4.WithClientIP(net.IPv4(10, 1, 0, 12)))},
		{name: "nak", req: m(dhcpv4.MessageTypeRequest, "02:aa:00:00:00:0b", withRequested("10.9.9.9"), withServerID("10.1.0.1"))},
		{name: "inform", req: m(dhcpv4.MessageTypeInform, "02:aa:00:00:00:0c", cat(bios,
			[]dhcpv4.Modifier{dhcpv4.WithClientIP(net.IPv4(10, 1, 0, 77))})...)},
		{name: "client_id_and_hostname", req: m(dhcpv4.MessageTypeDiscover, "02:aa:00:00:00:0d",
			dhcpv4.WithOption(dhcpv4.OptClientIdentifier([]byte{1, 2, 0xaa, 0, 0, 0, 0x0d})), dhcpv4.WithOption(dhcpv4.OptHostName("node13")))},
		{name: "maxsize_1500_long_relay", req: m(dhcpv4.MessageTypeDiscover, "02:aa:00:00:00:0e", cat(bios,
			[]dhcpv4.Modifier{long82, dhcpv4.WithOption(dhcpv4.OptMaxMessageSize(1500))})...)},
		{name: "overloaded_reply", req: m(dhcpv4.MessageTypeDiscover, "02:aa:00:00:00:0f", cat(bios,
			[]dhcpv4.Modifier{long82, dhcpv4.WithOption(dhcpv4.OptClientIdentifier(bytes.Repeat([]byte{2}, 100)))})...)},
		{name: "long_client_id_split", req: m(dhcpv4.MessageTypeDiscover, "02:aa:00:00:00:10",
			dhcpv4.WithOption(dhcpv4.OptClientIdentifier(bytes.Repeat([]byte{3}, 300))), dhcpv4.WithOption(dhcpv4.OptMaxMessageSize(1500)))},
		{name: "proxy_bios_discover", proxy: true, req: m(dhcpv4.MessageTypeDiscover, "02:aa:00:00:00:11", bios...)},
		{name: "proxy_ipxe_discover", proxy: true, req: m(dhcpv4.MessageTypeDiscover, "02:aa:00:00:00:12",
			cat(ipxe, pxe(iana.EFI_X86_64, "PXEClient:Arch:00007:UNDI:003010"))...)},
		{name: "proxy_httpclient_discover", proxy: true, req: m(dhcpv4.MessageTypeDiscover, "02:aa:00:00:00:13",
			pxe(iana.EFI_X86_64_HTTP, "HTTPClient:Arch:00016")...)},
	}
}
