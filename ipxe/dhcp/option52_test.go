package dhcp

import (
	"bytes"
	"maps"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
)

// TestReplyOverloadsFields: a reply whose options do not fit 548 bytes even
// without options 66 and 67 (a relay's long option 82 and a long client
// identifier, both echoed) goes out in 548 bytes with the rest of its
// options in the sname field, then in the file field too (the boot file
// name moving to option 67), as option 52 says; every option reads back.
func TestReplyOverloadsFields(t *testing.T) {
	relay := dhcpv4.OptGeneric(dhcpv4.OptionRelayAgentInformation, bytes.Repeat([]byte{1}, 200))
	for _, tc := range []struct {
		name     string
		clientID int // bytes of option 61
		want     byte
	}{
		{name: "sname", clientID: 60, want: overloadSname},
		{name: "sname and file", clientID: 100, want: overloadFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHandler(testConfig(), nil, func() time.Time { return t0 })
			req := msg(t, dhcpv4.MessageTypeDiscover, "02:52:00:00:00:01", withArch(iana.INTEL_X86PC),
				dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00000:UNDI:002001")), dhcpv4.WithOption(relay),
				dhcpv4.WithOption(dhcpv4.OptClientIdentifier(bytes.Repeat([]byte{2}, tc.clientID))))
			res := h.Handle(req)
			if res.Reply == nil {
				t.Fatalf("no reply: %s", res.Drop)
			}
			sent := res.Reply.ToBytes()
			want := maps.Clone(res.Reply.Options)
			b := encode(res.Reply, maxMessageOf(req))
			if len(b) > minMessage {
				t.Fatalf("reply is %d bytes (%d unfitted), want at most %d", len(b), len(sent), minMessage)
			}
			raw, err := dhcpv4.FromBytes(b)
			if err != nil {
				t.Fatal(err)
			}
			if got := raw.Options.Get(dhcpv4.OptionOptionOverload); len(got) != 1 || got[0] != tc.want {
				t.Errorf("option 52 = % x, want %d", got, tc.want)
			}
			for _, c := range []dhcpv4.OptionCode{dhcpv4.OptionDHCPMessageType, dhcpv4.OptionServerIdentifier, dhcpv4.OptionRelayAgentInformation} {
				if !raw.Options.Has(c) {
					t.Errorf("%v not in the options field", c)
				}
			}
			got, err := parse(b)
			if err != nil {
				t.Fatal(err)
			}
			// The boot file is in the file field or option 67, the TFTP
			// server in siaddr or option 66.
			if f := got.BootFileNameOption(); f == "" {
				want.Del(dhcpv4.OptionBootfileName)
				if got.BootFileName != "undionly.kpxe" {
					t.Errorf("boot file %q, want undionly.kpxe", got.BootFileName)
				}
			}
			if !got.Options.Has(dhcpv4.OptionTFTPServerName) && got.ServerIPAddr.String() == string(want.Get(dhcpv4.OptionTFTPServerName)) {
				want.Del(dhcpv4.OptionTFTPServerName)
			}
			if len(got.Options) != len(want) {
				t.Errorf("%d options read back, want %d:\n%s", len(got.Options), len(want), got.Summary())
			}
			for c, v := range want {
				if !bytes.Equal(got.Options[c], v) {
					t.Errorf("option %d reads back as % x, want % x", c, got.Options[c], v)
				}
			}
		})
	}
}

// TestRequestOverloadHonoured: a client may put options in the sname and
// file fields too (option 52). They count as if in the options field: an
// iPXE user class in the file field gets the boot script URL, an option 60
// in the file field and an option 93 in the sname field the UEFI binary.
func TestRequestOverloadHonoured(t *testing.T) {
	h := newHarness(t, testConfig())
	for _, tc := range []struct {
		name        string
		flag        byte
		file, sname dhcpv4.Options
		want        string
	}{
		{name: "user class in file", flag: overloadFile,
			file: dhcpv4.OptionsFromList(dhcpv4.OptUserClass("iPXE")), want: "http://10.1.0.5:27778/boot/v1/bootscript?mac=${net0/mac}"},
		{name: "vendor class in file, arch in sname", flag: overloadFile | overloadSname,
			file:  dhcpv4.OptionsFromList(dhcpv4.OptClassIdentifier("PXEClient:Arch:00007:UNDI:003016")),
			sname: dhcpv4.OptionsFromList(dhcpv4.OptClientArch(iana.EFI_X86_64)), want: "ipxe.efi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := msg(t, dhcpv4.MessageTypeDiscover, "02:52:00:00:01:01", dhcpv4.WithOption(dhcpv4.OptGeneric(dhcpv4.OptionOptionOverload, []byte{tc.flag})))
			b := req.ToBytes()
			writeArea(b[fileOff:fileOff+fileLen], tc.file)
			writeArea(b[snameOff:snameOff+snameLen], tc.sname)
			offer := h.exchangeRaw(b)
			if offer == nil {
				t.Fatal("no offer")
			}
			if f := offer.BootFileNameOption(); f != tc.want {
				t.Errorf("boot file %q, want %q", f, tc.want)
			}
		})
	}
	for name, b := range map[string][]byte{
		"flag 4":          msg(t, dhcpv4.MessageTypeDiscover, "02:52:00:00:01:02", dhcpv4.WithOption(dhcpv4.OptGeneric(dhcpv4.OptionOptionOverload, []byte{4}))).ToBytes(),
		"truncated field": overloadedWith(t, []byte{60, 200, 'P'}),
	} {
		if _, err := parse(b); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// overloadedWith is a DISCOVER whose file field (option 52 = 1) holds field.
func overloadedWith(t *testing.T, field []byte) []byte {
	t.Helper()
	b := msg(t, dhcpv4.MessageTypeDiscover, "02:52:00:00:01:03", dhcpv4.WithOption(dhcpv4.OptGeneric(dhcpv4.OptionOptionOverload, []byte{overloadFile}))).ToBytes()
	copy(b[fileOff:], field)
	return b
}

// TestRealClientReadsOverloadedReply: busybox udhcpc (maximum message
// size 576) gets a reply that needs both fields: 63 DNS servers fill the
// options field, its 100-byte client identifier goes to the file field
// and the boot file name, as option 67, to the sname field. udhcpc reads
// its lease, the DNS servers and the boot file from them.
func TestRealClientReadsOverloadedReply(t *testing.T) {
	l := newLink(t)
	cfg := nsConfig()
	for i := range 63 {
		cfg.Subnets[0].DNS = append(cfg.Subnets[0].DNS, netip.AddrFrom4([4]byte{10, 77, 1, byte(i + 1)}))
	}
	cfg.Subnets[0].DNS = cfg.Subnets[0].DNS[1:]
	nsServerWith(t, l, filepath.Join(t.TempDir(), "bss.db"), nil, cfg)
	env := udhcpc(t, l, "-V", "PXEClient:Arch:00000:UNDI:002001", "-x", "0x5d:0000",
		"-x", "0x3d:"+strings.Repeat("ab", 100), "-O", "bootfile")
	if env["ip"] != "10.77.0.100" || env["subnet"] != "255.255.255.0" || env["serverid"] != "10.77.0.1" {
		t.Errorf("lease %v", env)
	}
	if got := env["bootfile"]; got != "undionly.kpxe" {
		t.Errorf("bootfile (option 67) %q, want undionly.kpxe from the sname field", got)
	}
	if got := len(strings.Fields(env["dns"])); got != 63 {
		t.Errorf("%d DNS servers, want 63: %q", got, env["dns"])
	}
}
