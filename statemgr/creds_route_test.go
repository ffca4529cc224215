package statemgr_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/authtest"
	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/statemgr"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// TestCredentialsRoute: GET /Inventory/RedfishEndpointCredentials hands
// the stored logins to an admin token only: an operator is refused by the
// route table, a caller without a token by the guard; an HSM that does not
// check tokens refuses everyone, and one that only shadows the check
// everyone it did not verify as admin: a password never leaves HSM
// unauthenticated.
func TestCredentialsRoute(t *testing.T) {
	is := authtest.New(t)
	admin := token.Config{Token: is.Token("pcs", auth.Admin)}
	shadow := is.Config()
	shadow.Shadow = true
	for _, tc := range []struct {
		name   string
		cfg    auth.Config
		caller token.Config
		want   string // "" for the logins, else the status refused with
	}{
		{name: "admin", cfg: is.Config(), caller: admin},
		{name: "operator", cfg: is.Config(), caller: token.Config{Token: is.Token("op", auth.Operator)}, want: "403"},
		{name: "no token", cfg: is.Config(), want: "401"},
		{name: "tokens off", cfg: auth.Config{}, caller: admin, want: "403"},
		{name: "shadow, admin", cfg: shadow, caller: admin},
		{name: "shadow, operator", cfg: shadow, caller: token.Config{Token: is.Token("op", auth.Operator)}, want: "403"},
		{name: "shadow, no token", cfg: shadow, want: "403"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hc := startHSM(t, tc.cfg, admin)
			got, err := client.New(hc.URL(), tc.caller.Client(nil), "test").BMCCredentials(t.Context(), nil)
			switch {
			case tc.want == "" && (err != nil || len(got) != 1 || got[0] != hsm.BMCCredential{ID: "x3000c0s1b0", User: "root", Password: "secret"}):
				t.Errorf("got %+v %v, want the login", got, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || len(got) != 0):
				t.Errorf("got %+v %v, want %s", got, err, tc.want)
			}
		})
	}
}

// startHSM runs an HSM with auth cfg holding one endpoint with a login
// (created with the admin token when HSM checks them).
func startHSM(t *testing.T, cfg auth.Config, admin token.Config) *client.Client {
	t.Helper()
	dir := t.TempDir()
	d, err := statemgr.StartDaemon(t.Context(), statemgr.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "hsm.db"),
		CredKeyFile: filepath.Join(dir, "cred.key"), Auth: cfg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	c := client.New(d.URL(), admin.Client(nil), "test")
	if err := c.CreateRedfishEndpoints(t.Context(), hsm.RedfishEndpoint{ID: "x3000c0s1b0", FQDN: "127.0.0.1:9",
		User: "root", Password: "secret"}); err != nil {
		t.Fatal(err)
	}
	return c
}
