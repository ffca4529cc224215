package nodes_test

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/daemontest"
	"github.com/hmsuite/hms/nodes"
	"github.com/hmsuite/hms/nodes/client"
	"github.com/hmsuite/hms/nodes/wire"
)

// TestDaemonOnPostgres: the nodes daemon runs on a PostgreSQL URL end to
// end (an apply with a BMC secret written to sls, hsm and bss, the nodes
// and their stored secret there after a restart), and neither its log nor
// its answers show the URL's password.
func TestDaemonOnPostgres(t *testing.T) {
	s := newSuite(t)
	dsn := pg.DatabaseWithPassword(t, "s3cret")
	key := filepath.Join(t.TempDir(), "nodes.key")
	var logs bytes.Buffer
	start := func() *nodes.Daemon {
		t.Helper()
		d, err := nodes.StartDaemon(t.Context(), nodes.DaemonConfig{Listen: "127.0.0.1:0", DB: dsn,
			CredKeyFile: key, SLSURL: s.urls["sls"], HSMURL: s.urls["hsm"], BSSURL: s.urls["bss"],
			Log: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := start()
	stop := daemontest.Run(t, d.Run)
	set := threeNodes("http://img/vmlinuz")[:2]
	set[1].ComputeNode.BMCIP, set[1].ComputeNode.BMCCredentialsFile = "127.0.0.1", "bmc.json"
	secrets := map[string]wire.Credentials{"bmc.json": {Username: "root", Password: "bmc-pw"}}
	if _, err := client.New(d.URL(), nil, "test").Apply(t.Context(), wire.ApplyRequest{Resources: set, Secrets: secrets}); err != nil {
		t.Fatal(err)
	}
	stop()
	d = start()
	stop = daemontest.Run(t, d.Run)
	// The stored secret serves an apply that does not send it.
	if _, err := client.New(d.URL(), nil, "test").Apply(t.Context(), wire.ApplyRequest{Resources: set}); err != nil {
		t.Fatal(err)
	}
	daemontest.Check(t, d.URL(), []daemontest.Call{
		{Method: "GET", Path: nodes.Base + "/computenodes/" + set[1].ComputeNode.Xname, Want: `"bmc_credentials_file":"bmc.json"`},
		{Method: "GET", Path: nodes.Base + "/bootprofiles", Want: `"compute"`},
	}, "s3cret", "bmc-pw")
	stop()
	if strings.Contains(logs.String(), "s3cret") {
		t.Errorf("log shows the password:\n%s", logs.String())
	}
}
