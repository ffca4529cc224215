package statemgr_test

import (
	"path/filepath"
	"testing"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver/conntest"
	"github.com/hmsuite/hms/statemgr"
)

// TestMaxConnectionsFlag: -max-connections reaches the daemon's server.
func TestMaxConnectionsFlag(t *testing.T) {
	conntest.CheckFlag(t, "hsm", func(f *cli.FlagSet) func() (conntest.Daemon, error) {
		fl := statemgr.RegisterFlags(f, func(string) string { return "" })
		return func() (conntest.Daemon, error) {
			cfg, err := fl.Config()
			if err != nil {
				return nil, err
			}
			cfg.CredKeyFile = filepath.Join(t.TempDir(), "hsm-cred.key")
			return statemgr.StartDaemon(t.Context(), cfg)
		}
	})
}
