package dhcp

import (
	"net"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
)

// FuzzHandler feeds raw packets to the handler: whatever parses is handled
// without panicking, and every reply it builds serialises (fitted to the
// client's size, overloaded when needed) and parses back.
func FuzzHandler(f *testing.F) {
	t := &testing.T{}
	seeds := []*dhcpv4.DHCPv4{
		msg(t, dhcpv4.MessageTypeDiscover, "02:00:00:00:00:01", withArch(iana.INTEL_X86PC)),
		msg(t, dhcpv4.MessageTypeDiscover, "02:aa:00:00:00:01", dhcpv4.WithOption(dhcpv4.OptUserClass("iPXE"))),
		msg(t, dhcpv4.MessageTypeRequest, "02:aa:00:00:00:01", withRequested("10.1.0.10"), withServerID("10.1.0.1")),
		msg(t, dhcpv4.MessageTypeRequest, "02:aa:00:00:00:01", dhcpv4.WithGatewayIP(net.ParseIP("10.2.0.1")), withRequested("10.2.0.100")),
		msg(t, dhcpv4.MessageTypeRelease, "02:aa:00:00:00:01", dhcpv4.WithClientIP(net.ParseIP("10.1.0.10"))),
		msg(t, dhcpv4.MessageTypeDecline, "02:aa:00:00:00:01", withRequested("10.1.0.10")),
		msg(t, dhcpv4.MessageTypeInform, "02:aa:00:00:00:01", dhcpv4.WithClientIP(net.ParseIP("10.1.0.10"))),
		msg(t, dhcpv4.MessageTypeDiscover, "02:aa:00:00:00:01", dhcpv4.WithOption(dhcpv4.OptClassIdentifier("HTTPClient")), withArch(iana.EFI_ARM64_HTTP)),
	}
	for _, s := range seeds {
		f.Add(s.ToBytes())
	}
	f.Add([]byte{1, 1, 6, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := parse(b)
		if err != nil {
			return
		}
		for _, proxy := range []bool{false, true} {
			cfg := testConfig()
			cfg.Proxy = proxy
			h := NewHandler(cfg, hsmView{"02:00:00:00:00:01": {xname: "x1"}}, func() time.Time { return t0 })
			// Twice: the second sees the state the first left.
			for range 2 {
				for _, res := range []Result{h.Handle(req), h.HandleBootServer(req)} {
					if res.Reply == nil {
						continue
					}
					if _, err := parse(encode(req, res.Reply)); err != nil {
						t.Fatalf("reply does not parse back: %v\n%s", err, res.Reply.Summary())
					}
					Destination(req, res.Reply, ServerPort, ClientPort)
				}
			}
			h.Expire()
		}
	})
}
