package power

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver/conntest"
)

// TestMaxConnectionsFlag: -max-connections reaches the daemon's server.
func TestMaxConnectionsFlag(t *testing.T) {
	// HSM answers nothing: the cap is checked before any sampling matters.
	hsm := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(hsm.Close)
	conntest.CheckFlag(t, "pcs", func(f *cli.FlagSet) func() (conntest.Daemon, error) {
		fl := RegisterFlags(f)
		return func() (conntest.Daemon, error) {
			if err := f.Set("hsm-url", hsm.URL); err != nil {
				return nil, err
			}
			cfg, err := fl.Config()
			if err != nil {
				return nil, err
			}
			return StartDaemon(t.Context(), cfg)
		}
	})
}
