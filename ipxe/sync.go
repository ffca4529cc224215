package ipxe

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/hmsuite/hms/internal/pause"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// hsmTimeout bounds one read of HSM.
const hsmTimeout = 30 * time.Second

// SyncConfig says how the cache follows HSM.
type SyncConfig struct {
	// CallbackURL is where HSM posts SCNs (this daemon's /boot/v1/scn);
	// empty: no subscription, only periodic resyncs.
	CallbackURL string
	// Resync is how often the whole cache is read again from HSM (5 min),
	// catching what no SCN reports (new MACs and IPs, deleted nodes).
	Resync time.Duration
	// After is the clock of the subscription's checks
	// (client.HoldConfig.After; nil: time.After), RetryAfter that of the
	// retries of a full read that failed (nil: time.After). Two clocks, so
	// a test's tick meant for one is not taken by the other.
	After, RetryAfter func(time.Duration) <-chan time.Time
}

// syncer is the part of the service that talks to HSM: a full read at start
// and every Resync, reads of the nodes SCNs name that the cache lacks, and
// of the MACs and IPs requests missed.
type syncer struct {
	hsm   HSM
	cfg   SyncConfig
	force chan struct{}
	// waits are full reads a caller waits for (POST /hosts), each
	// answered with the read's error.
	waits chan chan error
	fetch chan []string
	// subscribed is closed once HSM holds BSS's SCN subscription
	// (first holds it: it stays closed when HSM later loses it).
	subscribed chan struct{}
}

func newSyncer(hsm HSM, cfg SyncConfig) *syncer {
	if cfg.Resync <= 0 {
		cfg.Resync = 5 * time.Minute
	}
	if cfg.RetryAfter == nil {
		cfg.RetryAfter = time.After
	}
	return &syncer{hsm: hsm, cfg: cfg, force: make(chan struct{}, 1), waits: make(chan chan error), fetch: make(chan []string, 64),
		subscribed: make(chan struct{})}
}

// Resync asks for a full read of HSM without waiting for it (POST /hosts).
func (s *Service) Resync() {
	if s.sync == nil {
		return
	}
	select {
	case s.sync.force <- struct{}{}:
	default:
	}
}

// ResyncWait reads HSM fully and returns once that read has ended: its
// error, or ctx's if ctx ends first. Without HSM it returns at once.
func (s *Service) ResyncWait(ctx context.Context) error {
	if s.sync == nil {
		return nil
	}
	done := make(chan error, 1)
	select {
	case s.sync.waits <- done:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ApplySCN updates the cache from an HSM SCN at once; components the cache
// does not know are read from HSM in the background.
func (s *Service) ApplySCN(scn *SCN) {
	s.m.scns.Inc()
	unknown := s.cache.applySCN(scn)
	if len(unknown) == 0 || s.sync == nil {
		return
	}
	select {
	case s.sync.fetch <- unknown:
	default:
		s.Resync()
	}
}

// RunSync subscribes to HSM's SCNs, reads HSM fully and keeps the cache
// fresh until ctx is cancelled.
func (s *Service) RunSync(ctx context.Context) error {
	if s.sync == nil {
		<-ctx.Done()
		return nil
	}
	if s.sync.cfg.CallbackURL != "" {
		go s.subscribe(ctx)
	} else {
		close(s.sync.subscribed)
	}
	s.resyncUntilDone(ctx)
	t := time.NewTicker(s.sync.cfg.Resync)
	defer t.Stop()
	// A full read that fails is tried again with backoff (1 s doubling to
	// 30 s) until one succeeds, not left to the next Resync: the one after
	// a restored subscription (Regained) or an overflow of SCNs naming
	// unknown nodes stands for SCNs lost, which nothing else brings back.
	var retry <-chan time.Time
	failed := 0
	resync := func() error {
		err := s.resyncOnce(ctx)
		if err == nil {
			retry, failed = nil, 0
			return nil
		}
		retry = s.sync.cfg.RetryAfter(min(time.Second<<min(failed, 5), 30*time.Second))
		failed++
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			resync()
		case <-s.sync.force:
			resync()
		case <-retry:
			resync()
		case done := <-s.sync.waits:
			done <- resync()
		case ids := <-s.sync.fetch:
			s.fetchNodes(ctx, ids)
		case key := <-s.lookups:
			s.lookupKeys(ctx, s.drainLookups(key))
		}
	}
}

// resyncUntilDone reads HSM until it succeeds once, with backoff.
func (s *Service) resyncUntilDone(ctx context.Context) {
	for attempt := 0; ctx.Err() == nil; attempt++ {
		if s.resyncOnce(ctx) == nil {
			return
		}
		if !pause.For(ctx, min(time.Second<<min(attempt, 5), 30*time.Second)) {
			return
		}
	}
}

// resyncOnce reads every node and interface from HSM and replaces the cache.
func (s *Service) resyncOnce(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, hsmTimeout)
	defer cancel()
	s.cache.beginRead()
	comps, err := s.sync.hsm.Components(ctx, url.Values{"type": {"Node"}})
	if err == nil {
		var eths []EthernetInterface
		eths, err = s.sync.hsm.EthernetInterfaces(ctx, nil)
		if err == nil {
			s.cache.replaceAll(buildNodes(comps, eths))
			s.m.resyncs.Inc()
			s.log.Debug("hsm_resynced", "nodes", len(comps), "interfaces", len(eths))
			return nil
		}
	}
	s.m.resyncErrors.Inc()
	s.log.Warn("hsm_resync_failed", "err", err)
	return err
}

// fetchNodes reads the named nodes and their interfaces from HSM; names HSM
// does not return are dropped from the cache.
func (s *Service) fetchNodes(ctx context.Context, ids []string) {
	ctx, cancel := context.WithTimeout(ctx, hsmTimeout)
	defer cancel()
	s.m.lookups.Inc()
	comps, err := s.sync.hsm.QueryComponents(ctx, ids)
	var eths []EthernetInterface
	if err == nil {
		eths, err = s.sync.hsm.EthernetInterfaces(ctx, url.Values{"ComponentID": ids})
	}
	if err != nil {
		s.m.resyncErrors.Inc()
		s.log.Warn("hsm_read_failed", "components", len(ids), "err", err)
		return
	}
	comps = slices.DeleteFunc(comps, func(c Component) bool { return c.Type != "Node" })
	nodes := buildNodes(comps, eths)
	var list []*Node
	var gone []string
	for _, id := range ids {
		if n := nodes[id]; n != nil {
			list = append(list, n)
		} else {
			gone = append(gone, id)
		}
	}
	s.cache.put(list, gone)
}

// lookupBatch bounds the MACs and IPs read from HSM in one query.
const lookupBatch = 128

// drainLookups returns first and the other keys already waiting, distinct,
// up to lookupBatch: in a boot storm a thousand nodes ask every second, and
// one query per key kept HSM busy and the queue full.
func (s *Service) drainLookups(first string) []string {
	keys := []string{first}
	for len(keys) < lookupBatch {
		select {
		case k := <-s.lookups:
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		default:
			return keys
		}
	}
	return keys
}

// lookupKeys reads from HSM the nodes owning MACs or IPs the cache missed.
func (s *Service) lookupKeys(ctx context.Context, keys []string) {
	var macs, ips []string
	for _, k := range keys {
		if ip, err := netip.ParseAddr(k); err == nil {
			ips = append(ips, ip.String())
		} else {
			macs = append(macs, k)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, hsmTimeout)
	defer cancel()
	var ids []string
	for _, q := range []url.Values{{"MACAddress": macs}, {"IPAddress": ips}} {
		if len(q["MACAddress"])+len(q["IPAddress"]) > 0 {
			ids = s.ownersToRead(ctx, q, ids)
		}
	}
	if len(ids) > 0 {
		s.fetchNodes(ctx, ids)
	}
}

// ownersToRead adds to ids the nodes owning the interfaces q selects that
// the cache lacks, or lacks the asked MAC of.
func (s *Service) ownersToRead(ctx context.Context, q url.Values, ids []string) []string {
	s.m.lookups.Inc()
	eths, err := s.sync.hsm.EthernetInterfaces(ctx, q)
	if err != nil {
		if !errors.Is(err, problem.ErrNotFound) {
			s.m.resyncErrors.Inc()
			s.log.Warn("hsm_lookup_failed", "keys", len(q["MACAddress"])+len(q["IPAddress"]), "err", err)
		}
		return ids
	}
	for _, ei := range eths {
		if ei.ComponentID == "" || slices.Contains(ids, ei.ComponentID) {
			continue
		}
		// A node the cache knows is read again when the cache lacks this
		// MAC of it: it was read before HSM gave it the interface (HSM's
		// walk writes a node before its interfaces, and interfaces have no
		// SCN).
		_, cachedMAC := s.cache.ByMAC(ei.MACAddress)
		if _, known := s.cache.Node(ei.ComponentID); !known || (q.Has("MACAddress") && !cachedMAC) {
			ids = append(ids, ei.ComponentID)
		}
	}
	return ids
}

// lookupIP reads the node owning ip from HSM now (cloud-init asks once per
// boot, so it may wait for HSM).
func (s *Service) lookupIP(ctx context.Context, ip netip.Addr) {
	if s.sync == nil {
		return
	}
	s.lookupKeys(ctx, []string{ip.String()})
}

// subscribe has HSM hold BSS's SCN subscription (every state, role and
// subrole HSM knows, and Enabled changes) until ctx ends: retried with
// backoff until HSM holds it, subscribed again when HSM drops or loses it
// (client.Hold). An existing one (BSS restarted) is kept as it is: HSM
// still holds its cursor, and the periodic resync covers what its filters
// miss. One HSM is found to have lost or changed is restored and the
// cache read again at once: the SCNs HSM committed meanwhile were not all
// sent, and nodes would otherwise boot on what the cache had until the
// next periodic resync.
func (s *Service) subscribe(ctx context.Context) {
	t := true
	callback := s.sync.cfg.CallbackURL
	name := client.SubscriberName("bss", callback)
	var once sync.Once
	client.Hold(ctx, s.sync.hsm, client.HoldConfig{Log: s.log, Restored: s.m.restored, After: s.sync.cfg.After,
		Regained: func(context.Context) { s.Resync() },
		Build: func(v hsm.Values) hsm.Subscription {
			return Subscription{Subscriber: name, Enabled: &t, Url: callback, States: v.State, Roles: v.Role, SubRoles: v.SubRole}
		},
		Held: func(held bool) {
			if held {
				once.Do(func() { close(s.sync.subscribed) })
			}
		}})
}

// HSMReady reports whether HSM answers.
func (s *Service) HSMReady(ctx context.Context) error {
	if s.sync == nil {
		return problem.Unavailablef("no HSM configured")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return s.sync.hsm.Ready(ctx)
}
