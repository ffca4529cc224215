package ipxe

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/ipxe/tftp"
)

func TestBootChainFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "dhcp.json")
	os.WriteFile(file, []byte(`{"subnets":[{"subnet":"10.2.0.0/24","range":"10.2.0.10-10.2.0.20","relayed":true}]}`), 0o644)
	shortTok, tok := filepath.Join(dir, "short.token"), filepath.Join(dir, "disc.token")
	os.WriteFile(shortTok, []byte("too-short\n"), 0o600)
	os.WriteFile(tok, []byte("disc-token-0123456789\n"), 0o600)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"subnets":[{"subnet":"10.2.0.0/24","range":"10.3.0.10-10.3.0.20"}]}`), 0o644)
	for _, tc := range []struct {
		name    string
		args    string
		wantErr string
		check   func(t *testing.T, c DaemonConfig)
	}{
		{name: "off by default", check: func(t *testing.T, c DaemonConfig) {
			if c.DHCP != nil || c.TFTP != nil {
				t.Errorf("DHCP %v, TFTP %v", c.DHCP, c.TFTP)
			}
		}},
		{name: "discovery token too short", args: "-discovery-token-file " + shortTok, wantErr: "under 16 characters"},
		{name: "discovery token", args: "-discovery-token-file " + tok, check: func(t *testing.T, c DaemonConfig) {
			if c.DiscoveryTokenFile != tok {
				t.Errorf("DiscoveryTokenFile %q", c.DiscoveryTokenFile)
			}
		}},
		{name: "subnet without interface", args: "-dhcp-subnet 10.1.0.0/24", wantErr: "-dhcp-subnet needs -dhcp-interface"},
		{name: "no subnet", args: "-dhcp-interface lo", wantErr: "no subnet"},
		{name: "unknown interface", args: "-dhcp-interface nope0 -dhcp-subnet 10.1.0.0/24", wantErr: "nope0"},
		{name: "range outside the subnet", args: "-dhcp-interface lo -dhcp-subnet 10.1.0.0/24 -dhcp-range 10.1.1.1-10.1.1.9", wantErr: "range"},
		{name: "bad config file", args: "-dhcp-interface lo -dhcp-config " + bad, wantErr: "range"},
		{name: "flags and file", args: "-dhcp-interface lo -dhcp-subnet 10.1.0.0/24 -dhcp-router 10.1.0.1 -dhcp-dns 10.1.0.2,10.1.0.3 -dhcp-lease 2h -dhcp-config " + file,
			check: func(t *testing.T, c DaemonConfig) {
				s := c.DHCP.Handler.Subnets
				if len(s) != 2 || s[0].First.String() != "10.1.0.2" || s[0].Last.String() != "10.1.0.254" || len(s[0].DNS) != 2 ||
					!s[1].Relayed || s[1].Lease != s[0].Lease || s[0].Lease.String() != "2h0m0s" {
					t.Errorf("subnets %+v", s)
				}
			}},
		{name: "proxy needs no subnet", args: "-dhcp-interface lo -dhcp-proxy", check: func(t *testing.T, c DaemonConfig) {
			if !c.DHCP.Handler.Proxy || c.DHCP.BootServer.String() != "0.0.0.0:4011" {
				t.Errorf("proxy %v, boot server %v; want proxy with 0.0.0.0:4011", c.DHCP.Handler.Proxy, c.DHCP.BootServer)
			}
		}},
		{name: "proxy without boot server", args: "-dhcp-interface lo -dhcp-proxy -dhcp-boot-server-port 0", check: func(t *testing.T, c DaemonConfig) {
			if c.DHCP.BootServer != nil {
				t.Errorf("boot server %v, want none", c.DHCP.BootServer)
			}
		}},
		{name: "boot server without proxy", args: "-dhcp-interface lo -dhcp-subnet 10.1.0.0/24 -dhcp-boot-server-port 4011", wantErr: "-dhcp-boot-server-port needs -dhcp-proxy"},
		{name: "bad boot server port", args: "-dhcp-interface lo -dhcp-proxy -dhcp-boot-server-port 70000", wantErr: "not a port"},
		{name: "loopback port, no interface", args: "-dhcp-listen 127.0.0.1:6767 -dhcp-relay-port 6768 -dhcp-config " + file,
			check: func(t *testing.T, c DaemonConfig) {
				d := c.DHCP
				if d == nil || d.Interface != "" || d.Listen.String() != "127.0.0.1:6767" || d.RelayPort != 6768 ||
					d.Handler.ServerID.String() != "127.0.0.1" || len(d.Handler.Subnets) != 1 {
					t.Errorf("DHCP %+v", d)
				}
			}},
		{name: "relay port without a server", args: "-dhcp-relay-port 6768", wantErr: "-dhcp-relay-port needs -dhcp-interface"},
		{name: "listen not IPv4", args: "-dhcp-listen [::1]:6767 -dhcp-config " + file, wantErr: "want IPv4:PORT"},
		{name: "bad relay port", args: "-dhcp-listen 127.0.0.1:6767 -dhcp-relay-port 0 -dhcp-config " + file, wantErr: "not a port"},
		{name: "tftp", args: "-tftp-listen 127.0.0.1:0 -tftp-root " + dir, check: func(t *testing.T, c DaemonConfig) {
			if c.TFTP == nil || c.TFTP.Root != dir || c.TFTP.MaxWindow != tftp.DefaultMaxWindow || c.TFTP.MaxWindowBytes != tftp.DefaultMaxWindowBytes {
				t.Errorf("TFTP %+v", c.TFTP)
			}
		}},
		{name: "tftp max window", args: "-tftp-listen 127.0.0.1:0 -tftp-max-window 8 -tftp-root " + dir, check: func(t *testing.T, c DaemonConfig) {
			if c.TFTP == nil || c.TFTP.MaxWindow != 8 {
				t.Errorf("TFTP %+v", c.TFTP)
			}
		}},
		{name: "tftp max window bytes", args: "-tftp-listen 127.0.0.1:0 -tftp-max-window-bytes 16384 -tftp-root " + dir, check: func(t *testing.T, c DaemonConfig) {
			if c.TFTP == nil || c.TFTP.MaxWindowBytes != 16384 {
				t.Errorf("TFTP %+v", c.TFTP)
			}
		}},
		{name: "tftp max window bytes below two blocks", args: "-tftp-listen 127.0.0.1:0 -tftp-max-window-bytes 1000 -tftp-root " + dir, wantErr: "at least 1024"},
		{name: "tftp root missing", args: "-tftp-listen 127.0.0.1:0 -tftp-root " + dir + "/nope", wantErr: "not a directory"},
		{name: "tftp max window 0", args: "-tftp-listen 127.0.0.1:0 -tftp-max-window 0 -tftp-root " + dir, wantErr: "want 1 to 65535"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := cli.NewFlagSet("bss", func(string) string { return "" }, io.Discard)
			fl := RegisterFlags(f)
			args := append(strings.Fields(tc.args), "-listen", "127.0.0.1:0")
			if err := f.Parse(args); err != nil {
				t.Fatal(err)
			}
			c, err := fl.Config()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}
