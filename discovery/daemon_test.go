package discovery

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver/conntest"
)

// TestMaxConnectionsFlag: -max-connections reaches the daemon's server.
func TestMaxConnectionsFlag(t *testing.T) {
	// SLS and HSM answer nothing: the cap is checked before discovery matters.
	peer := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(peer.Close)
	key := filepath.Join(t.TempDir(), "cred.key")
	conntest.CheckFlag(t, "reds", func(f *cli.FlagSet) func() (conntest.Daemon, error) {
		fl := RegisterFlags(f)
		return func() (conntest.Daemon, error) {
			for name, v := range map[string]string{"sls-url": peer.URL, "hsm-url": peer.URL, "cred-key-file": key} {
				if err := f.Set(name, v); err != nil {
					return nil, err
				}
			}
			cfg, err := fl.Config()
			if err != nil {
				return nil, err
			}
			return StartDaemon(t.Context(), cfg)
		}
	})
}
