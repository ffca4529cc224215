package heartbeat

import (
	"testing"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver/conntest"
)

// TestMaxConnectionsFlag: -max-connections reaches the daemon's server.
func TestMaxConnectionsFlag(t *testing.T) {
	conntest.CheckFlag(t, "hbtd", func(f *cli.FlagSet) func() (conntest.Daemon, error) {
		fl := RegisterFlags(f)
		return func() (conntest.Daemon, error) {
			listen, o, err := fl.Config()
			if err != nil {
				return nil, err
			}
			return StartDaemon(t.Context(), listen, o)
		}
	})
}
