package layout

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/cli"
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
