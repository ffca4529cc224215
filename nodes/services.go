package nodes

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/ipxe/bss"
	bssclient "github.com/hmsuite/hms/ipxe/client"
	slsclient "github.com/hmsuite/hms/layout/client"
	"github.com/hmsuite/hms/layout/sls"
	"github.com/hmsuite/hms/nodes/wire"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// ServicesConfig says where the services are and how to reach them.
type ServicesConfig struct {
	SLSURL, HSMURL, BSSURL string
	// HBTDURL, optional, gives Observe the heartbeat state.
	HBTDURL string
	// HTTP is the client [one keeping Workers connections per service].
	HTTP *http.Client
	// Workers bounds the requests in flight to one service [8].
	Workers int
	Log     *slog.Logger
}

// Services is the Backend that writes to SLS, HSM and BSS with their
// typed clients.
type Services struct {
	sls     *slsclient.Client
	hsm     *client.Client
	bss     *bssclient.Client
	hbtd    *agent.Client
	workers int
	log     *slog.Logger
}

// NewServices returns the Backend over the services of cfg.
func NewServices(cfg ServicesConfig) *Services {
	if cfg.Workers <= 0 {
		cfg.Workers = 8
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Transport: transport(cfg.Workers)}
	}
	s := &Services{sls: slsclient.New(cfg.SLSURL, cfg.HTTP), hsm: client.New(cfg.HSMURL, cfg.HTTP, "nodes"),
		bss: bssclient.New(cfg.BSSURL, cfg.HTTP), workers: cfg.Workers, log: cfg.Log}
	if cfg.HBTDURL != "" {
		s.hbtd = agent.NewClient(cfg.HBTDURL, cfg.HTTP)
	}
	return s
}

// Ready reports whether HSM answers (the daemon's readiness).
func (s *Services) Ready(ctx context.Context) error { return s.hsm.Ready(ctx) }

// snapshot is what the services hold of the objects the daemon may own.
type snapshot struct {
	sls    map[string]sls.Hardware
	comps  map[string]hsm.Component
	eths   map[string]hsm.EthernetInterface
	rfes   map[string]hsm.RedfishEndpoint
	groups map[string]hsm.Group
	bss    map[string]bss.BootParams // by host
}

// read takes a snapshot of the services; Redfish endpoints only when
// withEndpoints (they are the slowest to list, and most sets have none).
func (s *Services) read(ctx context.Context, withEndpoints bool) (*snapshot, error) {
	snap := &snapshot{sls: map[string]sls.Hardware{}, comps: map[string]hsm.Component{}, eths: map[string]hsm.EthernetInterface{},
		rfes: map[string]hsm.RedfishEndpoint{}, groups: map[string]hsm.Group{}, bss: map[string]bss.BootParams{}}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		hw, err := s.sls.ListHardware(gctx)
		for _, h := range hw {
			snap.sls[h.Xname] = h
		}
		return err
	})
	g.Go(func() error {
		cs, err := s.hsm.Components(gctx, url.Values{"type": {"Node"}})
		for _, c := range cs {
			snap.comps[c.ID] = c
		}
		return err
	})
	g.Go(func() error {
		es, err := s.hsm.EthernetInterfaces(gctx, nil)
		for _, e := range es {
			snap.eths[e.ID] = e
		}
		return err
	})
	g.Go(func() error {
		gs, err := s.hsm.Groups(gctx, nil)
		for _, grp := range gs {
			snap.groups[grp.Label] = grp
		}
		return err
	})
	g.Go(func() error {
		bps, err := s.bss.AllBootParams(gctx)
		for _, bp := range bps {
			if len(bp.Hosts) == 1 {
				snap.bss[bp.Hosts[0]] = bp
			}
		}
		return err
	})
	if withEndpoints {
		g.Go(func() error {
			eps, err := s.hsm.RedfishEndpoints(gctx, nil)
			for _, e := range eps {
				snap.rfes[e.ID] = e
			}
			return err
		})
	}
	return snap, g.Wait()
}

// Observe returns what the services see of a node; a service that fails
// is listed in Errors.
func (s *Services) Observe(ctx context.Context, x string) wire.Observed {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var o wire.Observed
	if c, err := s.hsm.Component(ctx, x); err != nil {
		o.Errors = append(o.Errors, err.Error())
	} else {
		o.State, o.Flag = c.State, c.Flag
	}
	if hist, err := s.bss.EndpointHistory(ctx, x); err != nil {
		o.Errors = append(o.Errors, err.Error())
	} else {
		for _, h := range hist {
			if h.Endpoint == bss.EndpointBootscript && h.LastEpoch > 0 {
				t := time.Unix(h.LastEpoch, 0).UTC()
				o.LastBootFetch = &t
			}
		}
	}
	if s.hbtd != nil {
		if st, err := s.hbtd.State(ctx, x); err != nil {
			o.Errors = append(o.Errors, err.Error())
		} else {
			o.Heartbeating = &st.Heartbeating
		}
	}
	return o
}
