package dhcp

import (
	"bytes"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
)

// TestReplyFitsMaxMessageSize checks option 57: a PXE reply that would
// exceed the client's maximum drops options 66 and 67, which siaddr and the
// file field already carry, and keeps them when it fits.
func TestReplyFitsMaxMessageSize(t *testing.T) {
	h := newHarness(t, testConfig())
	pxe := []dhcpv4.Modifier{dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00000:UNDI:002001")), withArch(iana.INTEL_X86PC)}
	// Relay agent information is echoed back; pad it so the full reply is
	// a few bytes over the 548-byte minimum.
	base := h.exchange(msg(t, dhcpv4.MessageTypeDiscover, "02:cc:00:00:00:01", pxe...))
	if base == nil {
		t.Fatal("no offer")
	}
	pad := minMessage - len(base.ToBytes()) + 5 - 2
	if pad < 1 || pad > 255 {
		t.Fatalf("baseline reply is %d bytes; cannot pad option 82 to overflow 548", len(base.ToBytes()))
	}
	relay := dhcpv4.OptGeneric(dhcpv4.OptionRelayAgentInformation, bytes.Repeat([]byte{1}, pad))
	for _, tc := range []struct {
		name     string
		max      uint16
		wantOpts bool
	}{
		{name: "no option 57", wantOpts: false},
		{name: "576", max: 576, wantOpts: false},
		{name: "1500", max: 1500, wantOpts: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mods := append([]dhcpv4.Modifier{dhcpv4.WithOption(relay)}, pxe...)
			if tc.max != 0 {
				mods = append(mods, dhcpv4.WithOption(dhcpv4.OptMaxMessageSize(tc.max)))
			}
			offer := h.exchange(msg(t, dhcpv4.MessageTypeDiscover, "02:cc:00:00:00:02", mods...))
			if offer == nil {
				t.Fatal("no offer")
			}
			size := len(offer.ToBytes())
			if !tc.wantOpts && size > minMessage {
				t.Errorf("reply is %d bytes, want at most %d", size, minMessage)
			}
			if offer.BootFileName != "undionly.kpxe" || offer.ServerIPAddr.String() != "10.1.0.5" {
				t.Errorf("file %q siaddr %s, want undionly.kpxe from 10.1.0.5", offer.BootFileName, offer.ServerIPAddr)
			}
			has := offer.Options.Has(dhcpv4.OptionBootfileName) && offer.Options.Has(dhcpv4.OptionTFTPServerName)
			if has != tc.wantOpts {
				t.Errorf("options 66 and 67 present = %v, want %v (reply %d bytes)", has, tc.wantOpts, size)
			}
		})
	}
}
