package orchestrator

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/daemontest"
)

// TestDaemonOnPostgres: bos runs on a PostgreSQL URL end to end (a
// template, a boot session carried out over a simulated cluster, both
// there after a restart, /v2/healthz), and neither its log nor its answers
// show the URL's password.
func TestDaemonOnPostgres(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	e := newEnvOn(t, func(t testing.TB) string { return pg.DatabaseWithPassword(t, "s3cret") },
		func(cfg *DaemonConfig) { cfg.Log = log }, n1, n2)
	e.template("t1", "img1", n1, n2)
	e.session(`{"name":"s1","operation":"boot","template_name":"t1"}`)
	e.reconcile()
	e.clock.Advance(20 * time.Second)
	e.reconcile()
	e.restart()
	daemontest.Check(t, e.url, []daemontest.Call{
		{Method: "GET", Path: "/v2/sessiontemplates/t1", Want: `"name":"t1"`},
		{Method: "GET", Path: "/v2/sessions/s1", Want: `"status":"complete"`},
		{Method: "GET", Path: "/v2/components/" + n1, Want: `"bss_token":"token-1"`},
		{Method: "GET", Path: "/v2/healthz", Want: `"dbStatus":"ok"`},
	}, "s3cret")
	e.stop()
	if strings.Contains(logs.String(), "s3cret") {
		t.Errorf("log shows the password:\n%s", logs.String())
	}
}
