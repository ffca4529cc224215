package inventory

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/hmsuite/hms/statemgr/redfish"
)

// DiscoveryConfig configures a Discovery. Zero values take the defaults noted.
type DiscoveryConfig struct {
	// Workers is how many BMCs are walked at once (32).
	Workers int
	// Timeout caps the walk of one BMC (redfish.DefaultTimeout).
	Timeout time.Duration
	// MaxConcurrentRequests caps the requests in flight to one BMC (redfish default).
	MaxConcurrentRequests int
	// RootCAs, when set, turns BMC certificate checks on.
	RootCAs *x509.CertPool
	// PlainHTTP reaches BMCs over http instead of https.
	PlainHTTP bool
	// HTTPClient, when set, supplies the transport (tests serve simulators through it).
	HTTPClient *http.Client
	// Registerer receives the discovery metrics; nil registers nothing.
	Registerer prometheus.Registerer
	Log        *slog.Logger
	// OnWalked, if set, is told the xname of each endpoint whose walk has
	// ended and been stored (tests wait on it instead of polling
	// DiscoveryInfo). It must not block.
	OnWalked func(xname string)
	// BurstWalks caps the walks running while BMCs are being registered
	// (within BurstHold of a POST, PUT or PATCH of a RedfishEndpoint) and
	// HSM is short of CPU (Contended), so that in a burst of new BMCs the
	// registrations get the CPU and HSM's writer first and the walks catch
	// up after; with CPU to spare the walks run alongside (4; negative: no
	// cap).
	BurstWalks int
	// BurstHold is how long after the last registration the cap lasts (1 s).
	BurstHold time.Duration
	// Contended reports whether HSM is short of CPU; it must be quick. Nil:
	// the Go scheduler says so (goroutines wait for a processor, see
	// cpuProbe).
	Contended func() bool
}

// Discovery status values (DiscoveryStatus.Status).
const (
	DiscoveryNotStarted = "NotStarted"
	DiscoveryPending    = "Pending"
	DiscoveryInProgress = "InProgress"
	DiscoveryComplete   = "Complete"
)

// DiscoveryStatus is the body of GET /Inventory/DiscoveryStatus/{id}. HSM
// keeps one, ID 0, for the whole discovery queue. Like the shipped HSM it
// sends no Details (the swagger reserves them); the queue's size is in the
// hsm_discovery_queued and hsm_discovery_running metrics.
type DiscoveryStatus struct {
	ID             int       `json:"ID"`
	Status         string    `json:"Status"`
	LastUpdateTime time.Time `json:"LastUpdateTime"`
}

// queueCounts is what the discovery queue holds.
type queueCounts struct {
	Queued, Running, Done int
}

// counts returns the queue's counts.
func (d *Discovery) counts() queueCounts {
	d.mu.Lock()
	defer d.mu.Unlock()
	return queueCounts{Queued: len(d.queue), Running: len(d.running), Done: d.done}
}

// Discovery walks RedfishEndpoints on a bounded worker pool and stores what
// it learns; it also owns the endpoint credentials. Walks are queued by
// Enqueue and run by Run; a slow BMC holds one worker for at most Timeout.
type Discovery struct {
	store *Store
	creds *Creds
	cfg   DiscoveryConfig
	log   *slog.Logger

	mu      sync.Mutex
	queue   []string
	queued  map[string]bool
	running map[string]bool
	again   map[string]bool // running and asked for again (force)
	done    int
	status  DiscoveryStatus
	wake    chan struct{}
	lastReg time.Time // the last registration (see BurstWalks)

	sessions tls.ClientSessionCache // BMC TLS sessions, shared by the walks

	walks    *prometheus.CounterVec
	walkTime prometheus.Histogram
}

// NewDiscovery returns a Discovery over store, sealing credentials with creds.
func NewDiscovery(store *Store, creds *Creds, cfg DiscoveryConfig) *Discovery {
	if cfg.Workers <= 0 {
		cfg.Workers = 32
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = redfish.DefaultTimeout
	}
	if cfg.BurstWalks == 0 {
		cfg.BurstWalks = 4
	}
	if cfg.BurstHold <= 0 {
		cfg.BurstHold = time.Second
	}
	if cfg.Contended == nil {
		cfg.Contended = newCPUProbe().contended
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	d := &Discovery{store: store, creds: creds, cfg: cfg, log: cfg.Log,
		queued: map[string]bool{}, running: map[string]bool{}, again: map[string]bool{},
		status: DiscoveryStatus{Status: DiscoveryNotStarted, LastUpdateTime: store.now().UTC()},
		wake:   make(chan struct{}, 1), sessions: tls.NewLRUClientSessionCache(1024),
		walks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hsm_discovery_walks_total",
			Help: "Finished BMC walks by LastDiscoveryStatus."}, []string{"status"}),
		walkTime: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "hsm_discovery_walk_seconds",
			Help: "Time to walk one BMC and store the result.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 12)}),
	}
	if cfg.Registerer != nil {
		queued := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hsm_discovery_queued",
			Help: "BMC walks waiting for a worker."}, func() float64 { d.mu.Lock(); defer d.mu.Unlock(); return float64(len(d.queue)) })
		running := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hsm_discovery_running",
			Help: "BMC walks in progress."}, func() float64 { d.mu.Lock(); defer d.mu.Unlock(); return float64(len(d.running)) })
		cfg.Registerer.MustRegister(d.walks, d.walkTime, queued, running)
	}
	return d
}

// Run walks queued endpoints until ctx is cancelled. Endpoints queued but
// not walked when the last run stopped, and those whose walk it interrupted
// (still DiscoveryStarted), are queued again.
func (d *Discovery) Run(ctx context.Context) error {
	ids, err := d.store.discoveryBacklog(ctx)
	if err != nil {
		return fmt.Errorf("discovery: %w", err)
	}
	if err := d.Enqueue(ctx, ids, false); err != nil {
		return fmt.Errorf("discovery: %w", err)
	}
	g, ctx := errgroup.WithContext(ctx)
	for range d.cfg.Workers {
		g.Go(func() error {
			d.work(ctx)
			return nil
		})
	}
	return g.Wait()
}

func (d *Discovery) work(ctx context.Context) {
	for {
		id, ok, wait := d.next()
		if !ok {
			if !d.idle(ctx, wait) {
				return
			}
			continue
		}
		d.discover(ctx, id)
		d.finish(id)
		if d.cfg.OnWalked != nil && ctx.Err() == nil {
			d.cfg.OnWalked(id)
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// idle waits for a wake-up, or for wait (when positive: the burst cap
// lasts that long); it reports whether ctx is still live.
func (d *Discovery) idle(ctx context.Context, wait time.Duration) bool {
	var hold <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		hold = t.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-d.wake:
	case <-hold:
	}
	return true
}

// Enqueue queues walks of the endpoints ids, durably: a restart walks
// them still. An endpoint already queued is not queued twice; one being
// walked is walked again afterwards only if force.
func (d *Discovery) Enqueue(ctx context.Context, ids []string, force bool) error {
	// Store only what this call queues: an endpoint being walked, not
	// forced, is not walked again, so it must not wait in the stored queue.
	d.mu.Lock()
	store := make([]string, 0, len(ids))
	for _, id := range ids {
		if force || !d.running[id] {
			store = append(store, id)
		}
	}
	d.mu.Unlock()
	if len(store) == 0 {
		return nil
	}
	if err := d.store.queueDiscovery(ctx, store); err != nil {
		return err
	}
	d.mu.Lock()
	for _, id := range ids {
		switch {
		case d.queued[id]:
		case d.running[id]:
			if force {
				d.again[id] = true
			}
		default:
			d.queued[id] = true
			d.queue = append(d.queue, id)
		}
	}
	d.touch()
	d.mu.Unlock()
	d.signal()
	return nil
}

func (d *Discovery) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// registering notes that a BMC is being registered: for BurstHold, while
// HSM is short of CPU, at most BurstWalks walks run.
func (d *Discovery) registering() {
	d.mu.Lock()
	d.lastReg = d.store.now()
	d.mu.Unlock()
}

// next takes the next endpoint to walk; when the burst cap holds it back,
// wait is when to ask again.
func (d *Discovery) next() (id string, ok bool, wait time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.queue) == 0 {
		return "", false, 0
	}
	if d.cfg.BurstWalks > 0 && len(d.running) >= d.cfg.BurstWalks {
		if left := d.lastReg.Add(d.cfg.BurstHold).Sub(d.store.now()); left > 0 && d.cfg.Contended() {
			return "", false, min(left, cpuProbeEvery) // ask again: the CPU may be free by then
		}
	}
	id = d.queue[0]
	d.queue[0] = ""
	d.queue = d.queue[1:]
	delete(d.queued, id)
	d.running[id] = true
	d.touch()
	if len(d.queue) > 0 {
		// Pass the wake-up on so idle workers drain the queue.
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}
	return id, true, 0
}

func (d *Discovery) finish(id string) {
	d.mu.Lock()
	delete(d.running, id)
	d.done++
	requeue := d.again[id]
	delete(d.again, id)
	if requeue && !d.queued[id] {
		d.queued[id] = true
		d.queue = append(d.queue, id)
	}
	d.touch()
	more := len(d.queue) > 0
	d.mu.Unlock()
	if more { // a worker the burst cap held back may take one now
		d.signal()
	}
}

// touch refreshes the status; d.mu is held.
func (d *Discovery) touch() {
	st := DiscoveryComplete
	switch {
	case len(d.running) > 0:
		st = DiscoveryInProgress
	case len(d.queue) > 0:
		st = DiscoveryPending
	}
	d.status = DiscoveryStatus{ID: 0, Status: st, LastUpdateTime: d.store.now().UTC()}
}

// Status returns the discovery status.
func (d *Discovery) Status() DiscoveryStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.status
}

// endpoint returns how to reach the stored endpoint row.
func (d *Discovery) endpoint(row rfRow) (redfish.Endpoint, error) {
	ep := redfish.Endpoint{ID: row.ep.ID, FQDN: row.ep.FQDN, IPAddress: row.ep.IPAddress, RootCAs: d.cfg.RootCAs}
	if d.cfg.PlainHTTP {
		ep.Scheme = "http"
	}
	if len(row.cred) > 0 {
		c, err := d.openCred(row)
		if err != nil {
			return ep, err
		}
		ep.User, ep.Password = c.User, c.Password
	}
	return ep, nil
}

func (d *Discovery) openCred(row rfRow) (rfCred, error) {
	var c rfCred
	if len(row.cred) == 0 {
		return c, nil
	}
	plain, err := d.creds.open(row.ep.ID, row.cred)
	if err != nil {
		return c, err
	}
	err = json.Unmarshal(plain, &c)
	return c, err
}

func (d *Discovery) sealCred(id string, c rfCred) ([]byte, error) {
	if c == (rfCred{}) {
		return nil, nil
	}
	plain, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	return d.creds.seal(id, plain)
}

// LoadDiscovery returns a Discovery whose credential key is read from (or
// created at) credKeyFile and, when caBundle names a PEM file, whose BMC
// certificates are checked against it.
func LoadDiscovery(store *Store, credKeyFile, caBundle string, cfg DiscoveryConfig) (*Discovery, error) {
	if cfg.Workers < 0 {
		return nil, fmt.Errorf("discovery workers: %d is negative", cfg.Workers)
	}
	creds, err := LoadCredKey(credKeyFile)
	if err != nil {
		return nil, err
	}
	if caBundle != "" {
		pem, err := os.ReadFile(caBundle)
		if err != nil {
			return nil, fmt.Errorf("bmc ca bundle: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("bmc ca bundle %s: no PEM certificate found", caBundle)
		}
	}
	return NewDiscovery(store, creds, cfg), nil
}
