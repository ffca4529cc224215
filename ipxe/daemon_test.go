package ipxe

import (
	"testing"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver/conntest"
)

// TestMaxConnectionsFlag: -max-connections reaches the daemon's server.
func TestMaxConnectionsFlag(t *testing.T) {
	conntest.CheckFlag(t, "bss", func(f *cli.FlagSet) func() (conntest.Daemon, error) {
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
