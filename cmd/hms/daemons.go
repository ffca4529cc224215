package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/hmsuite/hms/discovery"
	"github.com/hmsuite/hms/fanout"
	"github.com/hmsuite/hms/heartbeat"
	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/ipxe"
	"github.com/hmsuite/hms/layout"
	"github.com/hmsuite/hms/nodes"
	"github.com/hmsuite/hms/orchestrator"
	"github.com/hmsuite/hms/power"
	"github.com/hmsuite/hms/statemgr"
)

// A component is one daemon of `hms up`. Its flags are the daemon's own,
// declared by the daemon's package on s.f.Sub(name) (so -hsm-discovery-workers
// and HMS_HSM_DISCOVERY_WORKERS mean what -discovery-workers means to hsm);
// check validates them before anything is created, and start opens the
// daemon with the URLs of the daemons started before it. A new daemon joins
// hms up with one more such function and one entry in up's list.
type component struct {
	name  string
	check func() error
	start func(ctx context.Context) (daemon, error)
}

// suite is what the components of hms up share.
type suite struct {
	f      *cli.FlagSet
	getenv func(string) string
	dir    *string
	level  *slog.Level
	auth   auth.Config // every daemon's: checks callers' tokens, sends its own
	// nodeKey is bss's node-token key: -bss-node-token-key, or under
	// -auth-local hms up's own.
	nodeKey string
	// discoveryToken is reds's -reds-discovery-token-file, which bss puts
	// on the discovery image's command line unless -bss-discovery-token-file
	// names another.
	discoveryToken string
	// scnToken is what hsm and hmnfd send SCN subscribers unless their
	// -scn-token flags say: under -auth-local hms up's own.
	scnToken token.Config
	bus      *bus.Memory
	urls     map[string]string // name -> URL of the daemons started so far
	ready    []<-chan struct{} // all closed once the suite is connected
}

// local holds what hms up decides for a daemon unless its own flag says
// otherwise: its database under -data-dir, the log level of -log-level, and
// the URLs of its peers in the same process.
type local struct {
	s    *suite
	name string
	f    *cli.FlagSet
}

func (s *suite) local(name string) local { return local{s: s, name: name, f: s.f.Sub(name)} }

// file is the flag's value if it was given, else name under -data-dir.
func (l local) file(flag, value, name string) string {
	if l.f.IsSet(flag) {
		return value
	}
	return l.s.dataFile(name)
}

// peer is the flag's value if it was given, else the URL of the daemon peer.
func (l local) peer(flag, value, peer string) string {
	if l.f.IsSet(flag) {
		return value
	}
	return l.s.urls[peer]
}

// logger logs with daemon=<name> at the daemon's -log-level if given, else
// at hms up's.
func (l local) logger(level slog.Level) (*slog.Logger, *slog.LevelVar) {
	lv := new(slog.LevelVar)
	lv.Set(*l.s.level)
	if l.f.IsSet("log-level") {
		lv.Set(level)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lv})).With("daemon", l.name), lv
}

// noKafka refuses -<daemon>-kafka-brokers: hms up joins its daemons with
// its in-process bus and hsm's callbacks.
func (l local) noKafka(brokers []string) error {
	if len(brokers) > 0 {
		return cli.Usagef("-%s: hms up joins its daemons in-process; run the daemons as separate binaries to use Kafka",
			l.f.Name("kafka-brokers"))
	}
	return nil
}

func slsComponent(s *suite) component {
	l := s.local("sls")
	fl := layout.RegisterFlags(l.f)
	var cfg layout.DaemonConfig
	return component{name: l.name,
		check: func() (err error) { cfg, err = fl.Config(); return err },
		start: func(ctx context.Context) (daemon, error) {
			cfg.DB = l.file("db", cfg.DB, "sls.db")
			cfg.Log, _ = l.logger(*fl.Level)
			cfg.Auth = s.auth
			return layout.StartDaemon(ctx, cfg)
		}}
}

func hsmComponent(s *suite) component {
	l := s.local("hsm")
	fl := statemgr.RegisterFlags(l.f, s.getenv)
	var cfg statemgr.DaemonConfig
	return component{name: l.name,
		check: func() (err error) {
			if cfg, err = fl.Config(); err != nil {
				return err
			}
			return l.noKafka(*fl.Brokers)
		},
		start: func(ctx context.Context) (daemon, error) {
			cfg.DB = l.file("db", cfg.DB, "hsm.db")
			cfg.CredKeyFile = l.file("cred-key-file", cfg.CredKeyFile, "hsm-cred.key")
			cfg.SLSURL = l.peer("sls-url", cfg.SLSURL, "sls")
			if !l.f.IsSet("hbtd-url") {
				cfg.HBTD = &localHBTD{s: s} // started after hsm, which it needs
			}
			cfg.Log, _ = l.logger(*fl.Level)
			cfg.Publisher = s.bus
			cfg.Auth = s.auth
			if !cfg.SCNToken.Set() {
				cfg.SCNToken = s.scnToken
			}
			return statemgr.StartDaemon(ctx, cfg)
		}}
}

// localHBTD is hms up's hbtd as hsm's heartbeat check asks it: its URL is
// known once it has started, before any daemon runs. Its client carries the
// suite's token and, with -client-ca, its certificate, like every peer
// client; it is made at the first call and kept, so connections are reused.
type localHBTD struct {
	s    *suite
	once sync.Once
	c    *agent.Client
}

func (h *localHBTD) States(ctx context.Context, xnames []string) ([]agent.HBState, error) {
	h.once.Do(func() {
		h.c = agent.NewClient(h.s.urls["hbtd"], h.s.auth.Client(&http.Client{Timeout: 10 * time.Second}))
	})
	return h.c.States(ctx, xnames)
}

func hbtdComponent(s *suite) component {
	l := s.local("hbtd")
	fl := heartbeat.RegisterFlags(l.f)
	var listen string
	var o heartbeat.Options
	return component{name: l.name,
		check: func() (err error) {
			if listen, o, err = fl.Config(); err != nil {
				return err
			}
			return l.noKafka(*fl.Brokers)
		},
		start: func(ctx context.Context) (daemon, error) {
			o.DBPath = l.file("db", o.DBPath, "hbtd.db")
			o.HSMURL = l.peer("hsm-url", o.HSMURL, "hsm")
			o.Log, o.LogLevel = l.logger(*fl.Level)
			o.Publisher = s.bus
			o.Auth = s.auth
			return heartbeat.StartDaemon(ctx, listen, o)
		}}
}

// hmnfdComponent: hmnfd takes SCNs through HSM's durable callback
// subscription, not from the in-process bus: HSM moves its bus cursor once a
// message is in memory, so SCNs hmnfd had not stored yet would be lost when
// hms up stops; a subscription's cursor moves only when hmnfd has stored them.
func hmnfdComponent(s *suite) component {
	l := s.local("hmnfd")
	fl := fanout.RegisterFlags(l.f)
	var cfg fanout.DaemonConfig
	return component{name: l.name,
		check: func() (err error) {
			if cfg, err = fl.Config(); err != nil {
				return err
			}
			return l.noKafka(*fl.Brokers)
		},
		start: func(ctx context.Context) (daemon, error) {
			cfg.DB = l.file("db", cfg.DB, "hmnfd.db")
			cfg.HSMURL = l.peer("hsm-url", cfg.HSMURL, "hsm")
			cfg.Log, cfg.LogLevel = l.logger(*fl.Level)
			cfg.Auth = s.auth
			if cfg.Delivery.Auth == nil {
				cfg.Delivery.Auth = s.scnToken.Source()
			}
			d, err := fanout.StartDaemon(ctx, cfg)
			if err == nil {
				s.ready = append(s.ready, d.Intake())
			}
			return d, err
		}}
}

// bssComponent: bss, like hmnfd, follows HSM through its durable callback
// subscription. Its DHCP and TFTP servers are off unless -bss-dhcp-interface
// and -bss-tftp-listen are given; lease events go on the in-process bus.
func bssComponent(s *suite) component {
	l := s.local("bss")
	fl := ipxe.RegisterFlags(l.f)
	var cfg ipxe.DaemonConfig
	return component{name: l.name,
		check: func() (err error) {
			if cfg, err = fl.Config(); err != nil {
				return err
			}
			s.nodeKey = cfg.NodeTokenKey
			return l.noKafka(*fl.Brokers)
		},
		start: func(ctx context.Context) (daemon, error) {
			cfg.NodeTokenKey = s.nodeKey
			if cfg.DiscoveryTokenFile == "" {
				cfg.DiscoveryTokenFile = s.discoveryToken
			}
			cfg.DB = l.file("db", cfg.DB, "bss.db")
			cfg.HSMURL = l.peer("hsm-url", cfg.HSMURL, "hsm")
			cfg.Log, _ = l.logger(*fl.Level)
			cfg.Auth = s.auth
			cfg.Publisher = s.bus // lease events of its DHCP server (-bss-dhcp-interface)
			d, err := ipxe.StartDaemon(ctx, cfg)
			if err == nil {
				s.ready = append(s.ready, d.Service().Subscribed())
			}
			return d, err
		}}
}

// pcsComponent: pcs reads components, endpoints and reservations from the
// suite's HSM and reports power states back to it.
func pcsComponent(s *suite) component {
	l := s.local("pcs")
	fl := power.RegisterFlags(l.f)
	var cfg power.DaemonConfig
	return component{name: l.name,
		check: func() (err error) { cfg, err = fl.Config(); return err },
		start: func(ctx context.Context) (daemon, error) {
			cfg.DB = l.file("db", cfg.DB, "pcs.db")
			cfg.HSMURL = l.peer("hsm-url", cfg.HSMURL, "hsm")
			cfg.Log, _ = l.logger(*fl.Level)
			cfg.Auth = s.auth
			return power.StartDaemon(ctx, cfg)
		}}
}

// bosComponent: bos drives the suite's bss (boot parameters) and pcs
// (power), and reads nodes from its hsm.
func bosComponent(s *suite) component {
	l := s.local("bos")
	fl := orchestrator.RegisterFlags(l.f)
	var cfg orchestrator.DaemonConfig
	return component{name: l.name,
		check: func() (err error) { cfg, err = fl.Config(); return err },
		start: func(ctx context.Context) (daemon, error) {
			cfg.DB = l.file("db", cfg.DB, "bos.db")
			cfg.HSMURL = l.peer("hsm-url", cfg.HSMURL, "hsm")
			cfg.BSSURL = l.peer("bss-url", cfg.BSSURL, "bss")
			cfg.PCSURL = l.peer("pcs-url", cfg.PCSURL, "pcs")
			cfg.Log, _ = l.logger(*fl.Level)
			cfg.Auth = s.auth
			return orchestrator.StartDaemon(ctx, cfg)
		}}
}

// nodesComponent: the nodes daemon writes what `hms apply` declares to
// the suite's sls, hsm and bss, and reads heartbeats from its hbtd.
func nodesComponent(s *suite) component {
	l := s.local("nodes")
	fl := nodes.RegisterFlags(l.f)
	var cfg nodes.DaemonConfig
	return component{name: l.name,
		check: func() (err error) { cfg, err = fl.Config(); return err },
		start: func(ctx context.Context) (daemon, error) {
			cfg.DB = l.file("db", cfg.DB, "nodes.db")
			cfg.CredKeyFile = l.file("cred-key-file", cfg.CredKeyFile, "nodes-cred.key")
			cfg.SLSURL = l.peer("sls-url", cfg.SLSURL, "sls")
			cfg.HSMURL = l.peer("hsm-url", cfg.HSMURL, "hsm")
			cfg.BSSURL = l.peer("bss-url", cfg.BSSURL, "bss")
			cfg.HBTDURL = l.peer("hbtd-url", cfg.HBTDURL, "hbtd")
			cfg.Log, _ = l.logger(*fl.Level)
			cfg.Auth = s.auth
			return nodes.StartDaemon(ctx, cfg)
		}}
}

// redsComponent: reds (endpoint discovery) reads the DHCP lease events
// from the in-process bus and writes to hsm; it is started last, as
// nothing depends on it. It plays both roles here, REDS (River) and MEDS
// (Mountain): the separate meds binary is the same daemon in the Mountain
// role alone, for sites that run the two apart.
func redsComponent(s *suite) component {
	l := s.local("reds")
	fl := discovery.RegisterFlags(l.f)
	var cfg discovery.DaemonConfig
	return component{name: l.name,
		check: func() (err error) {
			if cfg, err = fl.Config(); err != nil {
				return err
			}
			s.discoveryToken = cfg.TokenFile
			return l.noKafka(*fl.Brokers)
		},
		start: func(ctx context.Context) (daemon, error) {
			cfg.DB = l.file("db", cfg.DB, "reds.db")
			cfg.CredKeyFile = l.file("cred-key-file", cfg.CredKeyFile, "reds-cred.key")
			cfg.SLSURL = l.peer("sls-url", cfg.SLSURL, "sls")
			cfg.HSMURL = l.peer("hsm-url", cfg.HSMURL, "hsm")
			cfg.Log, _ = l.logger(*fl.Level)
			cfg.Bus = s.bus
			cfg.Auth = s.auth
			d, err := discovery.StartDaemon(ctx, cfg)
			if err == nil {
				s.ready = append(s.ready, d.Service().Started())
			}
			return d, err
		}}
}

// authTables are the route tables of the daemons of hms up, which
// -help-auth prints.
func authTables() []auth.Table {
	return []auth.Table{layout.AuthTable(), statemgr.AuthTable(), heartbeat.AuthTable(), fanout.AuthTable(), ipxe.AuthTable(), power.AuthTable(), orchestrator.AuthTable(), nodes.AuthTable(), discovery.AuthTable()}
}

// The daemons' constructors return concrete types; make sure they fit.
var (
	_ daemon = (*layout.Daemon)(nil)
	_ daemon = (*statemgr.Daemon)(nil)
	_ daemon = (*heartbeat.Daemon)(nil)
	_ daemon = (*fanout.Daemon)(nil)
	_ daemon = (*ipxe.Daemon)(nil)
	_ daemon = (*power.Daemon)(nil)
	_ daemon = (*orchestrator.Daemon)(nil)
	_ daemon = (*nodes.Daemon)(nil)
	_ daemon = (*discovery.Daemon)(nil)
)
