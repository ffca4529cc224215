package layout

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/daemontest"
	"github.com/hmsuite/hms/internal/httpserver/conntest"
)

// TestStartDaemonLogsTheLoad: the daemon says it is loading its database,
// and how long that took (a large layout takes seconds).
func TestStartDaemonLogsTheLoad(t *testing.T) {
	var logs bytes.Buffer
	d, err := StartDaemon(t.Context(), DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "sls.db"),
		Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	for _, want := range []string{"msg=database_loading path=", "msg=database_loaded path=", " took="} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

// TestMaxConnectionsFlag: -max-connections reaches the daemon's server.
func TestMaxConnectionsFlag(t *testing.T) {
	conntest.CheckFlag(t, "sls", func(f *cli.FlagSet) func() (conntest.Daemon, error) {
		fl := RegisterFlags(f)
		return func() (conntest.Daemon, error) {
			cfg, err := fl.Config()
			if err != nil {
				return nil, err
			}
			return StartDaemon(t.Context(), cfg)
		}
	})
}

// TestDaemonOnPostgres: the daemon runs on a PostgreSQL URL end to end,
// and its log does not show the URL's password.
func TestDaemonOnPostgres(t *testing.T) {
	dsn := pg.DatabaseWithPassword(t, "s3cret")
	var logs bytes.Buffer
	d, err := StartDaemon(t.Context(), DaemonConfig{Listen: "127.0.0.1:0", DB: dsn,
		Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	stop := daemontest.Run(t, d.Run)
	req, _ := http.NewRequestWithContext(t.Context(), "PUT", d.URL()+"/v1/hardware/x3000c0s1b0n0",
		strings.NewReader(`{"Xname":"x3000c0s1b0n0","Class":"River","ExtraProperties":{"NID":1,"Role":"Compute"}}`))
	req.Header.Set("Content-Type", "application/json")
	for _, r := range []*http.Request{req, mustGet(t, d.URL()+"/v1/hardware/x3000c0s1b0n0")} {
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 || !strings.Contains(string(body), `"NID":1`) {
			t.Errorf("%s %s = %d %s", r.Method, r.URL.Path, resp.StatusCode, body)
		}
	}
	stop() // the server logs each request after answering it
	if strings.Contains(logs.String(), "s3cret") || !strings.Contains(logs.String(), "postgres:xxxxx@") {
		t.Errorf("log shows the password, or not the redacted URL:\n%s", logs.String())
	}
}

func mustGet(t *testing.T, u string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
