package fanout

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// Config tunes intake and delivery. Zero fields take the defaults of DefaultConfig.
type Config struct {
	// Timeout bounds one delivery POST. (hmnfd's own HTTP/1.1 client moves
	// a connection's deadline only once a quarter of it has passed, so a
	// POST it sends has between 3/4 of Timeout and all of it.)
	Timeout time.Duration
	// RetryMin and RetryMax bound the exponential backoff between attempts
	// to one subscriber (full jitter).
	RetryMin, RetryMax time.Duration
	// BatchMax is how many consecutive queued SCNs with identical attributes
	// one POST may carry (1 disables batching).
	BatchMax int
	// RetentionAge and RetentionCount limit a failing subscriber's backlog:
	// once its oldest undelivered SCN is older than RetentionAge, or it has
	// more than RetentionCount undelivered, it is expired.
	RetentionAge   time.Duration
	RetentionCount int
	// DeadLetterAge is how long a dead letter is kept (the newest 1,000
	// at most are kept in any case).
	DeadLetterAge time.Duration
	// MemQueue is how many entries each sender keeps in memory; the rest of
	// a backlog stays in the database until the sender catches up.
	MemQueue int
	// MaxInFlight caps concurrent delivery POSTs over all subscribers.
	MaxInFlight int
	// MetricSubscribers caps the per-subscriber metric label values (0: default).
	MetricSubscribers int
	// Client sends deliveries. Nil sends to plain http:// subscribers with
	// hmnfd's own HTTP/1.1 keep-alive client (see h1Client) and to the rest
	// with a net/http client, both pooled for MaxInFlight.
	Client *http.Client
	// TLS, when set, sets up the default client's transport for https://
	// subscribers: what it presents and trusts (hmnfd's -tls-cert and
	// -client-ca, mtls.Config.ConfigureTransport, which follows a rotated CA).
	TLS func(*http.Transport)
	// Auth, when set, gives the Bearer token every delivery carries (the
	// SCN token: a subscriber chooses its URL, so it gets a token worth
	// nothing but posting SCNs).
	Auth func(ctx context.Context) (string, error)
	// AuthHosts are the hosts besides loopback whose deliveries carry
	// Auth's token: a node subscribing with its own URL must not collect a
	// token that posts SCNs to bss or hmnfd.
	AuthHosts token.Hosts
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// DefaultConfig is the configuration the flags default to.
func DefaultConfig() Config {
	return Config{
		Timeout: 10 * time.Second, RetryMin: 250 * time.Millisecond, RetryMax: 30 * time.Second,
		BatchMax: 8, RetentionAge: 6 * time.Hour, RetentionCount: 10000, DeadLetterAge: 7 * 24 * time.Hour, MemQueue: 256,
		MaxInFlight: 256, MetricSubscribers: 200,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Timeout <= 0 {
		c.Timeout = d.Timeout
	}
	if c.RetryMin <= 0 {
		c.RetryMin = d.RetryMin
	}
	if c.RetryMax < c.RetryMin {
		c.RetryMax = max(d.RetryMax, c.RetryMin)
	}
	if c.BatchMax <= 0 {
		c.BatchMax = d.BatchMax
	}
	if c.RetentionAge <= 0 {
		c.RetentionAge = d.RetentionAge
	}
	if c.RetentionCount <= 0 {
		c.RetentionCount = d.RetentionCount
	}
	if c.DeadLetterAge <= 0 {
		c.DeadLetterAge = d.DeadLetterAge
	}
	if c.MemQueue <= 0 {
		c.MemQueue = d.MemQueue
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = d.MaxInFlight
	}
	if c.MetricSubscribers <= 0 {
		c.MetricSubscribers = d.MetricSubscribers
	}
	if c.Client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns = 2 * c.MaxInFlight
		tr.MaxIdleConnsPerHost = c.MaxInFlight
		if c.TLS != nil {
			c.TLS(tr)
		}
		// A redirect is a failed delivery, as it is for h1Client: following
		// a 301 or 302 would turn the POST into a bodiless GET and report
		// an SCN delivered that never was.
		c.Client = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Service matches SCNs against subscriptions, queues them durably and runs one
// sender per subscriber URL.
type Service struct {
	cfg   Config
	store *Store
	log   *slog.Logger
	m     *metrics

	batchMax atomic.Int64
	retryMin atomic.Int64 // nanoseconds

	mu sync.RWMutex // guards ix
	ix *index

	qmu      sync.Mutex // serialises Enqueue (id allocation, transaction, hand-off) with subscription removals; taken before mu
	nextID   int64
	marks    map[string]seqMark
	enqEpoch uint64 // Enqueue calls so far (urlRef.enq)

	smu      sync.Mutex // guards senders
	senders  map[string]*sender
	sched    *sched
	filterCh chan struct{} // subscription attributes changed (HSM callback mode)

	acks     *acker
	h1       *h1Client    // nil when Config.Client was given
	inFlight atomic.Int64 // POSTs being sent

	hsmStatus atomic.Value // string
	// hsmSubscribed is closed once SubscribeHSM first has its subscription.
	hsmSubscribed     chan struct{}
	hsmSubscribedOnce sync.Once
}

// New loads subscriptions, sequence marks and backlogs from store.
func New(ctx context.Context, store *Store, cfg Config, log *slog.Logger, reg prometheus.Registerer) (*Service, error) {
	ownClient := cfg.Client == nil
	cfg = cfg.withDefaults()
	s := &Service{
		cfg: cfg, store: store, log: log, m: newMetrics(reg, cfg.MetricSubscribers),
		ix: newIndex(), senders: map[string]*sender{}, sched: newSched(),
		filterCh: make(chan struct{}, 1), acks: newAcker(),
	}
	if ownClient {
		s.h1 = newH1Client(cfg.Timeout, cfg.MaxInFlight)
		s.h1.auth, s.h1.authHosts = cfg.Auth, cfg.AuthHosts
	}
	s.batchMax.Store(int64(cfg.BatchMax))
	s.retryMin.Store(int64(cfg.RetryMin))
	s.hsmStatus.Store("not configured")
	s.hsmSubscribed = make(chan struct{})
	subs, err := store.subscriptions(ctx)
	if err != nil {
		return nil, err
	}
	// Every subscription URL has its target and its sender from the
	// start (a database from before targets were stored with their
	// subscriptions may lack some targets).
	urls := make([]string, len(subs))
	for i, ss := range subs {
		urls[i] = ss.sub.Url
	}
	if _, err := store.targetIDs(ctx, urls); err != nil {
		return nil, err
	}
	for _, ss := range subs {
		s.bind(s.ix.put(ss.id, ss.key, ss.sub))
	}
	s.m.subs.Set(float64(len(subs)))
	if s.marks, err = store.seqMarks(ctx); err != nil {
		return nil, err
	}
	if err := store.pruneDeadLetters(ctx, cfg.Now().Add(-cfg.DeadLetterAge)); err != nil {
		return nil, err
	}
	backlogs, maxID, err := store.backlogs(ctx)
	if err != nil {
		return nil, err
	}
	s.nextID = maxID
	for url, n := range backlogs {
		s.senderFor(url).reload(n)
	}
	return s, nil
}

// Run delivers with MaxInFlight workers and the acknowledgement writer, and
// returns when ctx is cancelled and every worker has stopped.
func (s *Service) Run(ctx context.Context) error {
	// The acknowledgement writer outlives the workers so their last acks are written.
	ackCtx, stopAcks := context.WithCancel(context.WithoutCancel(ctx))
	defer stopAcks()
	ackDone := make(chan struct{})
	go func() { defer close(ackDone); s.runAcks(ackCtx) }()
	s.sched.run(ctx, s.cfg.MaxInFlight, func() {
		if s.h1 != nil {
			s.h1.close() // ends requests in flight, as cancelling ctx does for net/http
		}
	})
	stopAcks()
	<-ackDone
	return nil
}

// bind gives ref, a URL just indexed, its sender if it has none (creating
// it); s.mu is held for writing. The URL's target exists (the store
// creates it with the subscription).
func (s *Service) bind(ref *urlRef) {
	if ref.snd == nil {
		ref.snd = s.senderFor(ref.url)
	}
}

// senderFor returns the sender of url, creating it if needed.
func (s *Service) senderFor(url string) *sender {
	s.smu.Lock()
	defer s.smu.Unlock()
	if snd := s.senders[url]; snd != nil {
		return snd
	}
	snd := newSender(s, url)
	s.senders[url] = snd
	return snd
}

// sendersFor returns the senders of urls, creating them (and their
// targets) if needed.
func (s *Service) sendersFor(ctx context.Context, urls []string) ([]*sender, error) {
	if _, err := s.store.targetIDs(ctx, urls); err != nil {
		return nil, err
	}
	out := make([]*sender, len(urls))
	for i, url := range urls {
		out[i] = s.senderFor(url)
	}
	return out, nil
}

// dropSender stops and forgets the sender of url, if any.
func (s *Service) dropSender(url string) {
	s.smu.Lock()
	snd := s.senders[url]
	delete(s.senders, url)
	s.smu.Unlock()
	if snd == nil {
		return
	}
	snd.close()
	snd.mu.Lock()
	n := snd.backlog
	snd.backlog = 0
	snd.mu.Unlock()
	snd.backlogG.Sub(float64(n))
}

// delivery is the JSON a subscriber receives: the SCN, plus Seqs when several
// queued SCNs were batched into one POST (Seq is then the last of them).
type delivery struct {
	hsm.SCN
	Seqs []int64 `json:"Seqs,omitempty"`
}

// stats reports the number of senders and the total backlog.
func (s *Service) stats() (senders, backlog int) {
	s.smu.Lock()
	all := make([]*sender, 0, len(s.senders))
	for _, snd := range s.senders {
		all = append(all, snd)
	}
	s.smu.Unlock()
	for _, snd := range all {
		snd.mu.Lock()
		backlog += snd.backlog
		snd.mu.Unlock()
	}
	return len(all), backlog
}

// Validate rejects settings that cannot work, naming the flag.
func (c Config) Validate() error {
	switch {
	case c.Timeout <= 0:
		return fmt.Errorf("send-timeout must be positive")
	case c.RetryMin <= 0 || c.RetryMax < c.RetryMin:
		return fmt.Errorf("retry-min must be positive and at most retry-max")
	case c.BatchMax < 1 || c.BatchMax > 1000:
		return fmt.Errorf("batch-max must be 1-1000")
	case c.RetentionAge <= 0 || c.RetentionCount < 1:
		return fmt.Errorf("retention-age and retention-count must be positive")
	case c.DeadLetterAge <= 0:
		return fmt.Errorf("deadletter-age must be positive")
	case c.MaxInFlight < 1:
		return fmt.Errorf("max-inflight must be at least 1")
	case c.MetricSubscribers < 0:
		return fmt.Errorf("metric-subscribers must not be negative")
	}
	return nil
}
