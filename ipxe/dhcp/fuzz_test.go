package dhcp

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
)

// fuzzSeeds are the fuzz tests' seed packets: every message type, boot
// clients, a relay, overloaded fields, a split option.
func fuzzSeeds(f *testing.F) {
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
		msg(t, dhcpv4.MessageTypeDiscover, "02:aa:00:00:00:02", dhcpv4.WithOption(dhcpv4.OptClientIdentifier(bytes.Repeat([]byte{7}, 300)))),
	}
	for _, s := range seeds {
		f.Add(s.ToBytes())
	}
	f.Add(overloadedWith(t, []byte{77, 4, 'i', 'P', 'X', 'E', 255}))
	f.Add(overloadedWith(t, []byte{60, 3, 'P', 'X', 'E', 60, 6, 'C', 'l', 'i', 'e', 'n', 't', 12}))
	f.Add([]byte{1, 1, 6, 0})
}

// FuzzParseRequest holds the server's parser to insomniacslk's (with
// option 52 honoured, parse): never a panic, the same packets refused, and
// for the others the same header fields and the same options, split ones
// joined.
func FuzzParseRequest(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		var r request
		err := r.parse(b)
		m, want := parse(b)
		if (err == nil) != (want == nil) {
			t.Fatalf("parseRequest error %v, parse error %v", err, want)
		}
		if err != nil {
			return
		}
		if r.op != byte(m.OpCode) || r.htype != byte(m.HWType) || !bytes.Equal(r.mac(), m.ClientHWAddr) || r.xid != m.TransactionID ||
			r.flags != m.Flags || !net.IP(r.ciaddr[:]).Equal(m.ClientIPAddr) || !net.IP(r.giaddr[:]).Equal(m.GatewayIPAddr) {
			t.Fatalf("header differs: %+v\n%s", r, m.Summary())
		}
		n := 0
		for c := range 256 {
			if r.has(uint8(c)) {
				n++
			}
		}
		if n != len(m.Options) {
			t.Fatalf("%d options, insomniacslk %d", n, len(m.Options))
		}
		for c, v := range m.Options {
			if !r.has(c) || !bytes.Equal(r.opt(c), v) {
				t.Fatalf("option %d: % x, insomniacslk % x", c, r.opt(c), v)
			}
		}
		if r.msgType() != m.MessageType() || r.hostname() != m.HostName() || string(r.vendorClass()) != m.ClassIdentifier() ||
			r.maxMessage() != maxMessageOf(m) || r.isIPXE() != isIPXE(m) {
			t.Fatalf("accessors differ from insomniacslk's for\n%s", m.Summary())
		}
	})
}

// isIPXE is request.isIPXE as insomniacslk reads option 77.
func isIPXE(m *dhcpv4.DHCPv4) bool {
	for _, uc := range m.UserClass() {
		if uc == "iPXE" {
			return true
		}
	}
	return false
}

// FuzzHandler feeds raw packets to two handlers in step: one the server's
// way (parseRequest, appendAnswer), one insomniacslk's (parse, Handle,
// encode). Whatever parses is handled without panicking, both decide the
// same and send the same bytes, and every reply (fitted to the client's
// size, overloaded when needed) parses back.
func FuzzHandler(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := parse(b)
		if err != nil {
			return
		}
		for _, proxy := range []bool{false, true} {
			cfg := testConfig()
			cfg.Proxy = proxy
			view := hsmView{"02:00:00:00:00:01": {xname: "x1"}}
			fast := NewHandler(cfg, view, func() time.Time { return t0 })
			ref := NewHandler(cfg, view, func() time.Time { return t0 })
			// Twice: the second sees the state the first left.
			for range 2 {
				var r request
				if err := r.parse(b); err != nil {
					t.Fatalf("parseRequest refused what parse took: %v", err)
				}
				o := fast.handle(&r)
				res := ref.Handle(req)
				if o.drop != res.Drop || o.reply != (res.Reply != nil) {
					t.Fatalf("decisions differ: %q/%v, insomniacslk %q/%v", o.drop, o.reply, res.Drop, res.Reply != nil)
				}
				if o.reply {
					got, ok := fast.appendAnswer(nil, &o.ans)
					want := encode(res.Reply, maxMessageOf(req))
					if ok && !bytes.Equal(got, want) {
						t.Fatalf("replies differ:\n% x\n% x", got, want)
					}
					if _, err := parse(want); err != nil {
						t.Fatalf("reply does not parse back: %v\n%s", err, res.Reply.Summary())
					}
					Destination(req, res.Reply, ServerPort, ClientPort)
				}
				if res := ref.HandleBootServer(req); res.Reply != nil {
					if _, err := parse(encode(res.Reply, maxMessageOf(req))); err != nil {
						t.Fatalf("boot server reply does not parse back: %v", err)
					}
				}
			}
			fast.Expire()
			ref.Expire()
		}
	})
}
