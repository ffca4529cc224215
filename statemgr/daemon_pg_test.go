package statemgr_test

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/authtest"
	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/internal/daemontest"
	"github.com/hmsuite/hms/statemgr"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// TestDaemonOnPostgres: the daemon runs on a PostgreSQL URL end to end
// (components, a Redfish endpoint whose sealed login is a BYTEA), and its
// log does not show the URL's password.
func TestDaemonOnPostgres(t *testing.T) {
	dsn := pg.DatabaseWithPassword(t, "s3cret")
	var logs bytes.Buffer
	is := authtest.New(t)
	admin := token.Config{Token: is.Token("pcs", auth.Admin)}
	d, err := statemgr.StartDaemon(t.Context(), statemgr.DaemonConfig{Listen: "127.0.0.1:0", DB: dsn,
		CredKeyFile: filepath.Join(t.TempDir(), "cred.key"), Log: slog.New(slog.NewTextHandler(&logs, nil)), Auth: is.Config()})
	if err != nil {
		t.Fatal(err)
	}
	stop := daemontest.Run(t, d.Run)
	c := client.New(d.URL(), admin.Client(nil), "test")
	nid := 1
	if err := c.PostComponents(t.Context(), []hsm.Component{{ID: "x3000c0s1b0n0", State: "Ready", NID: &nid, Role: "Compute"}}, false); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Component(t.Context(), "x3000c0s1b0n0"); err != nil || got.NID == nil || *got.NID != 1 {
		t.Errorf("component %+v %v, want NID 1", got, err)
	}
	ep := hsm.RedfishEndpoint{ID: "x3000c0s1b0", FQDN: "127.0.0.1:9", User: "root", Password: "secret"}
	if err := c.CreateRedfishEndpoints(t.Context(), ep); err != nil {
		t.Fatal(err)
	}
	creds, err := c.BMCCredentials(t.Context(), nil)
	if err != nil || len(creds) != 1 || creds[0] != (hsm.BMCCredential{ID: "x3000c0s1b0", User: "root", Password: "secret"}) {
		t.Errorf("credentials %+v %v, want the login", creds, err)
	}
	stop()
	if strings.Contains(logs.String(), "s3cret") || !strings.Contains(logs.String(), "postgres:xxxxx@") {
		t.Errorf("log shows the password, or not the redacted URL:\n%s", logs.String())
	}
}
