package heartbeat

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/bus"
)

// Options configure a Service.
type Options struct {
	// DBPath is the SQLite file, or a postgres:// URL (sqldb.Open); required.
	DBPath string
	// HSMURL is HSM's base URL, such as http://127.0.0.1:27779.
	HSMURL string
	// SCNInURL is where HSM posts its SCNs to hbtd (SCNPath); empty:
	// StartDaemon's URL as HSM reaches it (loopback when HSM is on loopback).
	SCNInURL string
	// HTTPClient talks to HSM; nil means a default client.
	HTTPClient *http.Client
	// Publisher receives heartbeat change notifications; nil means none.
	Publisher bus.Publisher
	// Warntime, Errtime and Interval are the starting parameters (defaults 10 s,
	// 30 s, 5 s).
	Warntime, Errtime, Interval time.Duration
	// Port is reported as the read-only Port parameter.
	Port string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log is the logger; nil discards.
	Log *slog.Logger
	// LogLevel, if set, is raised to debug by a non-zero Debug parameter.
	LogLevel *slog.LevelVar
	// Registerer receives metrics; nil registers nowhere.
	Registerer prometheus.Registerer
	// MaxConns caps the connections StartDaemon's HTTP server holds open;
	// 0 means httpserver.DefaultMaxConns.
	MaxConns int
	// Auth says how StartDaemon's server checks callers' tokens, and the
	// token HTTPClient sends to HSM (zero: neither).
	Auth auth.Config
}

// Service is a whole heartbeat tracker: the Tracker, the Store it persists
// transitions in, the HSM and bus notifiers, and the live parameters.
type Service struct {
	Tracker *Tracker
	Store   *Store
	HSM     *HSMNotifier
	Bus     *BusNotifier
	params  *paramSet
	log     *slog.Logger
}

// New opens the store, restores the persisted node states (with grace, see
// Tracker.Restore) and returns a Service ready to Run.
func New(ctx context.Context, o Options) (*Service, error) {
	o = o.withDefaults()
	if err := CheckTimers(Timers{Warntime: o.Warntime, Errtime: o.Errtime, Interval: o.Interval, SmTimeout: DefaultSmTimeout}); err != nil {
		return nil, fmt.Errorf("heartbeat options: %w", err)
	}
	store, err := OpenStore(ctx, o.DBPath, o.Log, o.Registerer)
	if err != nil {
		return nil, err
	}
	store.now = o.Now
	s := &Service{Store: store, log: o.Log}
	s.HSM = NewHSMNotifier(o.HSMURL, o.Auth.Client(o.HTTPClient), o.Log, o.Registerer)
	s.HSM.q.done = func(cs []Change) { store.Ack(context.WithoutCancel(ctx), "hsm", cs) }
	sinks := []Sink{store, s.HSM}
	receivers := []string{"hsm"}
	if o.Publisher != nil {
		s.Bus = NewBusNotifier(o.Publisher, o.Log, o.Registerer)
		s.Bus.q.done = func(cs []Change) { store.Ack(context.WithoutCancel(ctx), "bus", cs) }
		sinks = append(sinks, s.Bus)
		receivers = append(receivers, "bus")
	}
	store.SetReceivers(receivers...)
	s.Tracker = NewTracker(Config{Warntime: o.Warntime, Errtime: o.Errtime, Now: o.Now, Log: o.Log, Registerer: o.Registerer}, sinks...)
	s.params = newParamSet(o, s)
	if err := s.restore(ctx, o.Now()); err != nil {
		store.Close()
		return nil, err
	}
	return s, nil
}

func (o Options) withDefaults() Options {
	if o.Warntime == 0 {
		o.Warntime = 10 * time.Second
	}
	if o.Errtime == 0 {
		o.Errtime = 30 * time.Second
	}
	if o.Interval == 0 {
		o.Interval = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o
}

func (s *Service) restore(ctx context.Context, now time.Time) error {
	patched, err := s.Store.LoadParams(ctx)
	if err != nil {
		return err
	}
	s.params.restore(patched, s.log)
	recs, err := s.Store.Load(ctx)
	if err != nil {
		return err
	}
	s.Tracker.Restore(recs)
	// Transitions a receiver had not confirmed when hbtd stopped are sent again.
	var toHSM, toBus []Change
	for _, r := range recs {
		if r.State == Unknown {
			continue // forgotten (Tracker.Forget): nothing to tell
		}
		if r.PendingHSM {
			toHSM = append(toHSM, r.change())
		}
		if r.PendingBus && s.Bus != nil {
			toBus = append(toBus, r.change())
		}
	}
	s.HSM.Enqueue(toHSM...)
	if s.Bus != nil {
		s.Bus.Enqueue(toBus...)
	}
	last, ok, err := s.Store.LastAlive(ctx)
	if err != nil {
		return err
	}
	if ok {
		s.Tracker.RecordGap(now.Sub(last))
	}
	s.log.Info("tracker_restored", "nodes", len(recs), "previous_run", ok, "resent_hsm", len(toHSM), "resent_bus", len(toBus))
	return s.Store.MarkAlive(ctx, now)
}

// Run runs the tracker, the store writer and the notifiers until ctx is
// cancelled.
func (s *Service) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.Tracker.Run(ctx) })
	g.Go(func() error { return s.Store.Run(ctx) })
	g.Go(func() error { return s.HSM.Run(ctx) })
	if s.Bus != nil {
		g.Go(func() error { return s.Bus.Run(ctx) })
	}
	return g.Wait()
}

// Close closes the store.
func (s *Service) Close() error { return s.Store.Close() }

// Params returns the current parameters.
func (s *Service) Params() agent.Params { return s.params.get() }
