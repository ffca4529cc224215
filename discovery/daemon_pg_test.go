package discovery

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/daemontest"
	"github.com/hmsuite/hms/ipxe/lease"
)

// TestDaemonOnPostgres: reds runs on a PostgreSQL URL end to end (a lease
// event and an endpoint stored, a node-side password handed out through
// the discovery token, the endpoint listed, and after a restart the lease
// still acting for the token), and neither its log nor its answers show
// the URL's password.
func TestDaemonOnPostgres(t *testing.T) {
	dir := t.TempDir()
	var logs bytes.Buffer
	cfg := DaemonConfig{Listen: "127.0.0.1:0", DB: pg.DatabaseWithPassword(t, "s3cret"), CredKeyFile: filepath.Join(dir, "key"),
		SLSURL: "http://127.0.0.1:1", HSMURL: "http://127.0.0.1:1", TokenFile: filepath.Join(dir, "token"),
		Log: slog.New(slog.NewTextHandler(&logs, nil))}
	if err := os.WriteFile(cfg.TokenFile, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const mac, x = "a4:bf:01:3f:00:01", "x3000c0s1b0"
	ev, err := lease.Encode(lease.Event{Kind: lease.Commit, MACAddress: mac, IPAddress: "10.254.8.1"})
	if err != nil {
		t.Fatal(err)
	}
	credentials := func(url string) {
		t.Helper()
		body := `{"addresses":[{"macAddress":"` + strings.ReplaceAll(mac, ":", "") +
			`","IPAddresses":[{"addressType":"IPv4","address":"10.254.8.1"}]}]}`
		if code, got := call(t, "POST", url+"/v1/credentials", "Bearer "+testToken, body); code != 200 || strings.Contains(got, "s3cret") {
			t.Errorf("POST /v1/credentials: %d %s", code, got)
		}
	}
	d, err := StartDaemon(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.svc.handleLeases(t.Context(), []bus.Message{{Value: ev}}); err != nil {
		t.Fatal(err)
	}
	if err := d.store.Put(t.Context(), Endpoint{Xname: x, Kind: KindRiver, MAC: "a4:bf:01:3f:00:02", IP: "10.254.8.2",
		Addr: "10.254.8.2", User: "root", Password: "bmc-pw", State: StateRegistered, Key: "key"}); err != nil {
		t.Fatal(err)
	}
	stop := daemontest.Run(t, d.Run)
	credentials(d.URL())
	daemontest.Check(t, d.URL(), []daemontest.Call{{Method: "GET", Path: "/v1/endpoints", Want: `"Xname":"` + x + `"`}}, "s3cret")
	stop()

	d, err = StartDaemon(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	stop = daemontest.Run(t, d.Run)
	credentials(d.URL()) // the lease, read back from the database
	daemontest.Check(t, d.URL(), []daemontest.Call{
		{Method: "GET", Path: "/v1/endpoints?state=registered", Want: `"Xname":"` + x + `"`},
		{Method: "GET", Path: "/metrics", Want: "reds_unknown_macs"},
	}, "s3cret")
	if nc, err := d.store.NodeCreds(t.Context(), mac); err != nil || nc.Password == "" {
		t.Errorf("node credentials after a restart: %+v, %v", nc, err)
	}
	stop()
	if strings.Contains(logs.String(), "s3cret") {
		t.Errorf("log shows the password:\n%s", logs.String())
	}
}
