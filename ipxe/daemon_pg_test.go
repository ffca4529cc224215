package ipxe

import (
	"bytes"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/daemontest"
	"github.com/hmsuite/hms/ipxe/dhcp"
)

// TestDaemonOnPostgres: bss runs on a PostgreSQL URL end to end (boot
// parameters stored, a boot script fetched, an address leased by its DHCP
// server, all there after a restart with the fetch in the endpoint history,
// /service/status naming the database up), and neither its log nor its
// answers show the URL's password.
func TestDaemonOnPostgres(t *testing.T) {
	dsn := pg.DatabaseWithPassword(t, "s3cret")
	var logs bytes.Buffer
	sub := dhcp.Subnet{Prefix: netip.MustParsePrefix("10.0.0.0/24"), First: netip.MustParseAddr("10.0.0.100"),
		Last: netip.MustParseAddr("10.0.0.200")}
	start := func() (*Daemon, func()) {
		t.Helper()
		d, err := StartDaemon(t.Context(), DaemonConfig{Listen: "127.0.0.1:0", DB: dsn, AdvertiseURL: "http://bss",
			Log: slog.New(slog.NewTextHandler(&logs, nil)),
			DHCP: &dhcp.ServerConfig{Listen: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, ReplyToPeer: true,
				Handler: dhcp.Config{Subnets: []dhcp.Subnet{sub}, ServerID: netip.MustParseAddr("10.0.0.1")}}})
		if err != nil {
			t.Fatal(err)
		}
		d.Service().cache.replaceAll(map[string]*Node{"x3000c0s2b0n0": node("x3000c0s2b0n0", "Compute", "", 2, nil)})
		return d, daemontest.Run(t, d.Run)
	}
	d, stop := start()
	daemontest.Check(t, d.URL(), []daemontest.Call{
		{Method: "PUT", Path: "/boot/v1/bootparameters", Body: `{"hosts":["x3000c0s2b0n0"],"kernel":"http://k","params":"p=1"}`},
		{Method: "GET", Path: "/boot/v1/bootscript?name=x3000c0s2b0n0", Want: "kernel --name kernel http://k"},
	}, "s3cret")
	dora(t, d.DHCP().Addr(), "02:00:00:00:97:01")
	stop() // flushes the endpoint history
	d, stop = start()
	daemontest.Check(t, d.URL(), []daemontest.Call{
		{Method: "GET", Path: "/boot/v1/bootparameters?name=x3000c0s2b0n0", Want: `"kernel":"http://k"`},
		{Method: "GET", Path: "/boot/v1/endpoint-history?name=x3000c0s2b0n0", Want: `"endpoint":"bootscript"`},
		{Method: "GET", Path: "/boot/v1/dhcp/leases", Want: `"IPAddress":"10.0.0.100","Subnet":"10.0.0.0/24","State":"bound"`},
		{Method: "GET", Path: "/boot/v1/service/status/etcd", Want: `"bss-status-etcd":"connected"`},
	}, "s3cret")
	stop()
	if strings.Contains(logs.String(), "s3cret") {
		t.Errorf("log shows the password:\n%s", logs.String())
	}
}
