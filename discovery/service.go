package discovery

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/hmsuite/hms/discovery/wire"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/ipxe/lease"
)

// Config is what a Service needs. Zero durations take the defaults noted.
type Config struct {
	HSM   HSM
	SLS   Layout
	Store *Store
	BMCs  *BMCs
	// Walker reads switch forwarding tables (an SNMPWalker).
	Walker Walker
	Switch SwitchConfig
	// Bus, if set, is read for lease events (topic lease.Topic, group Group).
	Bus   bus.Consumer
	Group string
	// River and Mountain choose the roles: REDS (switches) and MEDS (SLS
	// chassis). Both false means both.
	River, Mountain bool
	// FDBTTL is how long a switch's table answers questions (60 s);
	// FDBRefresh the slow periodic walk of every switch (10 min).
	FDBTTL, FDBRefresh time.Duration
	// FDBMinInterval is the least time between the starts of two walks of
	// one switch (1 s; negative: none): during a storm of leases every
	// switch has a question its last walk cannot answer, and would
	// otherwise be walked back to back.
	FDBMinInterval time.Duration
	// WalkConcurrency bounds the switches walked at once (8); Workers the
	// MACs processed at once (defaultWorkers).
	WalkConcurrency, Workers int
	// SLSRefresh is how often switches and Mountain chassis are re-read
	// from SLS (5 min); HSMPoll how often HSM's unplaced interfaces are
	// (60 s; 0 or less: the default, there is no off).
	SLSRefresh, HSMPoll time.Duration
	// SLSWatch is how often SLS's /version counter is read (5 s): when it
	// has moved, switches and chassis are re-read at once, so a switch
	// added to SLS is walked within seconds, not at the next SLSRefresh.
	SLSWatch time.Duration
	// PresenceInterval is how often registered BMCs are checked (30 s, ±10 %).
	PresenceInterval time.Duration
	// RetryMin and RetryMax bound the backoff of a MAC that failed (5 s, 5 min).
	RetryMin, RetryMax time.Duration
	// UnplacedGrace is how long a MAC found on no switch is deferred (HSM
	// may yet name it, from its walk of a node's BMC) before it is reported
	// unknown (5 min; negative: at once).
	UnplacedGrace time.Duration
	// LeaseGrace is how long past its end (the commit event's Expires) a
	// lease reds saw no expire event for still counts for the discovery
	// token (1 h; negative: none). bss publishes renewals of such leases
	// (at most once per half lease), each moving the end; a DHCP server
	// that does not leaves a renewed lease counting this long, no longer.
	LeaseGrace time.Duration
	// NTP and Syslog are set on new Mountain BMCs (NetworkProtocol PATCH).
	NTP    []string
	Syslog string
	// Now is the clock (time.Now).
	Now func() time.Time
	// Done, if set, is told the outcome of every MAC processed: the BMC
	// xname registered, or the error that left it unknown (tests, benchmarks).
	Done func(Outcome)
	// Retired, if set, is told the outcome of every attempt to retire a
	// BMC in HSM (nil: HSM took it), once the outcome is recorded (tests).
	Retired    func(xname string, err error)
	Registerer prometheus.Registerer
	Log        *slog.Logger
}

func (c *Config) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.FDBTTL, time.Minute)
	def(&c.FDBRefresh, 10*time.Minute)
	if c.FDBMinInterval == 0 {
		c.FDBMinInterval = time.Second
	}
	def(&c.SLSRefresh, 5*time.Minute)
	def(&c.SLSWatch, 5*time.Second)
	def(&c.HSMPoll, time.Minute)
	def(&c.PresenceInterval, 30*time.Second)
	def(&c.RetryMin, 5*time.Second)
	def(&c.RetryMax, 5*time.Minute)
	if c.UnplacedGrace == 0 {
		c.UnplacedGrace = 5 * time.Minute
	}
	switch {
	case c.LeaseGrace == 0:
		c.LeaseGrace = time.Hour
	case c.LeaseGrace < 0:
		c.LeaseGrace = 0
	}
	if c.Workers <= 0 {
		c.Workers = defaultWorkers
	}
	if c.Group == "" {
		c.Group = "reds"
	}
	if !c.River && !c.Mountain {
		c.River, c.Mountain = true, true
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
}

// defaultWorkers is how many MACs are processed at once. A worker spends
// nearly all its time waiting (on a BMC's HTTPS answers, on HSM's and our
// own SQLite commits), so the count bounds a burst's throughput, not CPU:
// with 32, 500 leases at once queued for up to 7 s; with 128 the 500-BMC
// benchmark's p99 halves (docs/benchmarks/discovery.md).
const defaultWorkers = 128

// Unknown is a MAC discovery could not place or register yet, and why
// (the wire type of GET /v1/unknown).
type Unknown = wire.Unknown

// job is one MAC to place and register; since is when it was noticed.
type job struct {
	mac, ip string
	since   time.Time
	// prev, on a retry, is when the attempt before ended: the forwarding
	// tables need only be read after it (not after since), so retries of
	// MACs on no switch share walks instead of each forcing one.
	prev time.Time
	// xname and kind are set for Mountain endpoints, whose xname is known,
	// and for endpoints left pending by an earlier attempt (resume).
	xname, kind string
	// resume is a pending endpoint's registration taken up again: it is
	// dropped if the endpoint is no longer pending when its turn comes.
	resume bool
	// attempts failed so far, the first noticed at first (the backoff
	// grows with them; the grace of a MAC on no switch runs from first).
	attempts int
	first    time.Time
	// claimed is an address a PUT /v1/discovery caller named, not one a
	// DHCP server or HSM gave: stored credentials are not tried there
	// unless reds has the BMC at it already (provision).
	claimed bool
	// network is a Mountain BMC's cabinet's HMN as SLS gives it (invalid:
	// none): its BMC is logged in to only at an address in it (inNetwork).
	// Set again from reds' current copy of SLS when the attempt runs.
	network netip.Prefix
}

// Service is REDS and MEDS: it places new BMCs, sets their credentials and
// registers them in HSM, and retires those that are gone.
type Service struct {
	cfg Config
	log *slog.Logger
	fdb *FDB
	loc *Locator
	// sync re-reads SLS when its /version moved (slssync.go).
	sync *slsSync
	reg  *registrar
	// owners asks HSM, in batches, whom it gives MACs to.
	owners *batcher[string, owned]
	m      *metrics

	mu       sync.Mutex
	queue    []string       // MACs waiting for a worker
	jobs     map[string]job // by MAC: queued, running or waiting to retry
	running  map[string]bool
	again    map[string]bool   // running and noticed again
	done     map[string]string // MACs registered or left to HSM: their address
	unknown  map[string]*Unknown
	wake     chan struct{}
	mountain map[string]job // expected Mountain endpoints by MAC
	logged   map[string]string
	started  chan struct{} // closed once SLS was first read

	// mountainRead is set once the Mountain chassis were read from SLS:
	// until then no Mountain BMC is logged in to (cabinetNetwork).
	mountainRead bool

	removeMu sync.Mutex               // guards removals (HSM is told outside it)
	removals map[string]*removalRetry // by xname: removals HSM did not take

	// leases are the MACs unknown to HSM holding a lease, as the DHCP
	// server's events told, and their address (credentials.go); under mu.
	leases map[string]heldLease
}

// New returns a Service; Run it.
func New(cfg Config) *Service {
	cfg.setDefaults()
	s := &Service{cfg: cfg, log: cfg.Log, jobs: map[string]job{}, running: map[string]bool{},
		again: map[string]bool{}, done: map[string]string{}, unknown: map[string]*Unknown{}, wake: make(chan struct{}, 1),
		mountain: map[string]job{}, logged: map[string]string{}, started: make(chan struct{}),
		removals: map[string]*removalRetry{}, leases: map[string]heldLease{}}
	s.m = newMetrics(cfg.Registerer, s)
	s.fdb = NewFDB(cfg.Walker, cfg.FDBTTL, cfg.FDBMinInterval, cfg.WalkConcurrency, cfg.Now, s.observeWalk)
	s.loc = NewLocator(cfg.SLS, s.fdb)
	s.sync = newSLSSync(cfg.SLS)
	s.reg = newRegistrar(cfg.HSM)
	s.owners = newBatcher(maxLookup, s.lookupOwners)
	return s
}

// Run reads lease events, polls HSM and SLS, processes MACs and checks
// presence until ctx ends.
func (s *Service) Run(ctx context.Context) error {
	// Switches and chassis are read before the first lease is taken, so
	// early leases do not fail for want of a switch list.
	defer s.fdb.Stop()
	s.readSLS(ctx)
	s.resumePending(ctx)
	close(s.started)
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { s.reg.run(ctx); return nil })
	g.Go(func() error { s.owners.run(ctx); return nil })
	for range s.cfg.Workers {
		g.Go(func() error { s.work(ctx); return nil })
	}
	g.Go(func() error { s.every(ctx, s.cfg.SLSRefresh, false, s.readSLS); return nil })
	if s.sync.sls != nil {
		g.Go(func() error { s.every(ctx, s.cfg.SLSWatch, false, s.watchSLS); return nil })
	}
	g.Go(func() error { s.every(ctx, s.cfg.PresenceInterval, false, s.checkPresence); return nil })
	g.Go(func() error { s.every(ctx, s.cfg.RetryMin, false, s.retryTick); return nil })
	g.Go(func() error { s.every(ctx, s.cfg.RetryMin, true, s.retryRemovals); return nil })
	g.Go(func() error { s.every(ctx, leaseSweep, true, s.sweepLeases); return nil })
	if s.cfg.River {
		g.Go(func() error { s.every(ctx, s.cfg.HSMPoll, true, s.pollHSM); return nil })
		g.Go(func() error { s.every(ctx, s.cfg.FDBRefresh, false, s.refreshFDB); return nil })
	}
	if s.cfg.Bus != nil {
		g.Go(func() error { return s.cfg.Bus.Consume(ctx, lease.Topic, s.cfg.Group, s.handleLeases) })
	}
	return g.Wait()
}

// Started is closed once Run has read SLS the first time (switches, and
// the Mountain endpoints pre-registered in HSM), successfully or not.
func (s *Service) Started() <-chan struct{} { return s.started }

// every runs fn (now too if now) and then every d, jittered by ±10 %,
// until ctx ends.
func (s *Service) every(ctx context.Context, d time.Duration, now bool, fn func(context.Context)) {
	for {
		if now {
			fn(ctx)
		}
		now = true
		jitter := time.Duration(rand.Int64N(int64(d)/5+1)) - d/10
		t := time.NewTimer(d + jitter)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// handleLeases acts on lease events: an unknown MAC that got an address is
// placed; an expected Mountain BMC learns its address. When the leases
// cannot be stored, nothing is done and the error goes back to the bus,
// which hands the batch again (its offsets are not committed): a lease
// only in memory would be lost at a restart (no event may come for it
// again before it ends).
func (s *Service) handleLeases(ctx context.Context, msgs []bus.Message) error {
	evs := make([]lease.Event, 0, len(msgs))
	for _, msg := range msgs {
		ev, err := lease.Decode(msg.Value)
		if err != nil {
			s.m.leases.WithLabelValues("malformed", "ignored").Inc()
			continue
		}
		evs = append(evs, ev)
	}
	changes, undo := s.noteLeases(evs)
	if err := s.saveLeases(ctx, changes); err != nil { // one transaction for the batch
		s.undoLeases(undo) // so the batch handed again makes the same changes
		return fmt.Errorf("lease events: %w", err)
	}
	for _, ev := range evs {
		s.place(ev)
	}
	return nil
}

// place acts on one lease event from a DHCP server (Notice, the bus).
func (s *Service) place(ev lease.Event) { s.placeAt(ev, false) }

// claim acts on PUT /v1/discovery's event: a caller saying where a BMC
// is, which is no lease reds saw (job.claimed).
func (s *Service) claim(ev lease.Event) { s.placeAt(ev, true) }

func (s *Service) placeAt(ev lease.Event, claimed bool) {
	kind := string(ev.Kind)
	if ev.Kind != lease.Commit || ev.IPAddress == "" {
		s.m.leases.WithLabelValues(kind, "ignored").Inc()
		return
	}
	s.mu.Lock()
	mj, isMountain := s.mountain[ev.MACAddress]
	s.mu.Unlock()
	var queued bool
	switch {
	case isMountain && s.cfg.Mountain:
		mj.ip, mj.since, mj.claimed = ev.IPAddress, s.cfg.Now(), claimed
		queued = s.submit(mj)
	case !ev.Known && netBooting(ev):
		// A node's NIC booting: HSM names it from its BMC's walk.
		s.leftToHSM(ev.MACAddress, ev.IPAddress)
		s.m.leases.WithLabelValues(kind, "netboot").Inc()
		return
	case !ev.Known && s.cfg.River:
		queued = s.submit(job{mac: ev.MACAddress, ip: ev.IPAddress, since: s.cfg.Now(), kind: KindRiver, claimed: claimed})
	default:
		s.m.leases.WithLabelValues(kind, "ignored").Inc()
		return
	}
	if queued {
		s.m.leases.WithLabelValues(kind, "queued").Inc()
	} else {
		s.m.leases.WithLabelValues(kind, "coalesced").Inc()
	}
}

// submit queues j and reports whether that made work. Lease events are
// coalesced (reds_lease_events_total{action="coalesced"}): a MAC queued
// already keeps its one queue slot and takes j's address; a MAC being
// processed is processed again afterwards only if j changes its address or
// kind (once, however many events arrive meanwhile); a MAC waiting for a
// retry with the same address and kind keeps its backoff (a renewal does
// not cut it short, but a MAC leased before MEDS read its Mountain chassis
// from SLS, and left unknown on the switches, is a Mountain job at once);
// and a MAC done already (registered, or left to HSM) at the same address
// makes no work at all.
func (s *Service) submit(j job) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.jobs[j.mac]
	if !had && !j.resume && s.done[j.mac] == j.ip {
		return false // a renewal of a MAC done with
	}
	waiting := s.unknown[j.mac] != nil
	same := had && old.ip == j.ip && old.kind == j.kind && old.resume == j.resume
	if had && old.ip == j.ip {
		// A renewal: the MAC keeps its backoff, grace and queueing time.
		j.attempts, j.first, j.prev, j.since = old.attempts, old.first, old.prev, old.since
		// A DHCP server or HSM giving the address a caller named vouches
		// for it, whichever came first.
		j.claimed = j.claimed && old.claimed
		old.claimed = j.claimed
		s.jobs[j.mac] = old
	}
	switch {
	case s.running[j.mac]:
		if same {
			return false // the attempt under way, or the one after it, answers
		}
		again := s.again[j.mac]
		s.jobs[j.mac], s.again[j.mac] = j, true
		return !again
	case waiting && same:
		return false
	case had && !waiting:
		s.jobs[j.mac] = j // queued: the newer address replaces the older
		return false
	}
	s.jobs[j.mac] = j
	delete(s.unknown, j.mac)
	delete(s.done, j.mac)
	s.queue = append(s.queue, j.mac)
	s.signal()
	return true
}

// leftToHSM records mac, leased ip by a network-booting client, as done
// with: the HSM poll, which finds it among the interfaces without a
// ComponentID until HSM's walk of its node's BMC names it, does not queue
// it either (5,000 nodes booting made 5,000 jobs a minute later, each
// walking every switch for a MAC on none). A MAC with a job keeps it.
func (s *Service) leftToHSM(mac, ip string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, had := s.jobs[mac]; !had {
		s.done[mac] = ip
	}
}

func (s *Service) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Service) next() (job, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return job{}, false
	}
	mac := s.queue[0]
	s.queue = s.queue[1:]
	s.running[mac] = true
	if len(s.queue) > 0 {
		s.signal()
	}
	return s.jobs[mac], true
}

func (s *Service) work(ctx context.Context) {
	for {
		j, ok := s.next()
		if !ok {
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
				continue
			}
		}
		c := newClock(s.cfg.Now, j.since)
		c.lap(&c.t.Queued)
		x, err := s.process(ctx, j, c)
		s.finish(j, err)
		s.m.observe(c.t)
		if s.cfg.Done != nil && ctx.Err() == nil {
			s.cfg.Done(Outcome{MAC: j.mac, Xname: x, Err: err, Timing: c.t})
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// Idle reports whether no MAC is queued or being processed (tests, bench).
func (s *Service) Idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue) == 0 && len(s.running) == 0
}

// observeWalk counts a finished walk and logs a switch's failure once per cause.
func (s *Service) observeWalk(sw Switch, st WalkStats, took time.Duration, err error) {
	s.m.walkTime.Observe(took.Seconds())
	s.m.badEntries.Add(float64(st.Bad))
	key := "switch " + sw.Xname
	s.mu.Lock()
	prev := s.logged[key]
	cause := ""
	if err != nil {
		cause = err.Error()
	}
	s.logged[key] = cause
	s.mu.Unlock()
	if err != nil {
		s.m.walks.WithLabelValues("error").Inc()
		if prev != cause {
			s.log.Warn("snmp_walk_failed", "switch", sw.Xname, "addr", sw.Addr, "err", err)
		}
		return
	}
	s.m.walks.WithLabelValues("ok").Inc()
	if prev != "" {
		s.log.Info("snmp_walk_recovered", "switch", sw.Xname)
	}
}
