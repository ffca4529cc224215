package power

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/daemontest"
	"github.com/hmsuite/hms/power/pcs"
)

// TestDaemonOnPostgres: pcs runs on a PostgreSQL URL end to end (a
// transition stored and carried out, a power-cap snapshot, the transitions
// listed after a restart, /health), and neither its log nor its answers
// show the URL's password.
func TestDaemonOnPostgres(t *testing.T) {
	e := newEnvOn(t, func(t testing.TB) string { return pg.DatabaseWithPassword(t, "s3cret") }, 1, nil)
	var logs bytes.Buffer
	e.stopPCS()
	e.log = slog.New(slog.NewTextHandler(&logs, nil))
	e.startPCS()
	n := e.node(0)
	if tr := e.transition("off", 1, locs(n)...); tr.Status != pcs.TransitionCompleted || tr.Counts.Succeeded != 1 {
		t.Fatalf("off: %+v", tr)
	}
	if c := e.capTask("POST", "/power-cap/snapshot", map[string]any{"xnames": []string{n}}); c.Counts.Succeeded != 1 {
		t.Errorf("snapshot: %+v", c)
	}
	e.stopPCS()
	e.startPCS()
	daemontest.Check(t, e.daemon.URL(), []daemontest.Call{
		{Method: "GET", Path: "/transitions", Want: `"operation":"Off"`},
		{Method: "GET", Path: "/power-cap", Want: `"type":"snapshot"`},
		{Method: "GET", Path: "/health", Want: `"KvStore":"connected, responsive"`},
	}, "s3cret")
	e.stopPCS()
	if strings.Contains(logs.String(), "s3cret") {
		t.Errorf("log shows the password:\n%s", logs.String())
	}
}
