package ipxe

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"
)

// ScriptConfig shapes the boot scripts.
type ScriptConfig struct {
	// AdvertiseURL is the base URL nodes reach BSS on (such as
	// http://10.92.100.81:27778): chain URLs and the cloud-init datasource
	// (ds=nocloud-net;s=<AdvertiseURL>/) are built from it.
	AdvertiseURL string
	// RetryDelay is the sleep before a failed boot chains back (30 s).
	RetryDelay time.Duration
	// RetrievalDelay is the sleep before an unknown node chains back with
	// its architecture (10 s).
	RetrievalDelay time.Duration
	// DiscoveryToken, when set, goes on the kernel command line of the
	// unknown nodes' entry (the discovery image) as DiscoveryParam: the
	// token reds's node-side routes take (reds -discovery-token-file).
	DiscoveryToken string
}

func (c ScriptConfig) withDefaults() ScriptConfig {
	if c.RetryDelay <= 0 {
		c.RetryDelay = 30 * time.Second
	}
	if c.RetrievalDelay <= 0 {
		c.RetrievalDelay = 10 * time.Second
	}
	c.AdvertiseURL = strings.TrimRight(c.AdvertiseURL, "/")
	return c
}

// Service is BSS: the boot parameter store, the HSM cache and the endpoint
// history, and what the API does with them.
type Service struct {
	store *Store
	cache *Cache
	hist  *history
	cfg   ScriptConfig
	log   *slog.Logger
	m     *metrics
	now   func() time.Time
	// lookups receives MACs, and IPs, the cache missed, for the Syncer
	// to read from HSM (nil: nobody reads them).
	lookups chan string
	// sync reads HSM into the cache (nil: no HSM).
	sync *syncer
	// trusted are the proxies whose X-Forwarded-For names a cloud-init caller.
	trusted []netip.Prefix
	// tokens mints node tokens (nil: off).
	tokens *NodeTokens
}

// newToken returns a new random referral token (a version 4 UUID).
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// missed asks the Syncer, without waiting, to look key (a MAC or an IP) up
// in HSM; when its queue is full the periodic resync will find it.
func (s *Service) missed(key string) {
	if s.lookups == nil {
		return
	}
	select {
	case s.lookups <- key:
	default:
	}
}

// Config is what a Service needs beside its store.
type Config struct {
	Script ScriptConfig
	// HSM, if set, is read into the cache; Sync says how.
	HSM  HSM
	Sync SyncConfig
	Log  *slog.Logger
	// Registerer receives the service's metrics (nil: none).
	Registerer prometheus.Registerer
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// TrustedProxies are the peers whose X-Forwarded-For header names the
	// cloud-init caller; from anyone else it is ignored (nil: from nobody).
	TrustedProxies []netip.Prefix
	// NodeTokens, when set, puts a node token on the kernel command line
	// and in the meta-data of a node asking from its own address.
	NodeTokens *NodeTokens
}

// New returns the service over store, with the endpoint history loaded.
func New(ctx context.Context, store *Store, cfg Config) (*Service, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cache := NewCache()
	s := &Service{store: store, cache: cache, hist: newHistory(), cfg: cfg.Script.withDefaults(), log: cfg.Log,
		m: newMetrics(cfg.Registerer, cache), now: cfg.Now, trusted: cfg.TrustedProxies,
		tokens: cfg.NodeTokens}
	if err := s.hist.load(ctx, store.db.R); err != nil {
		return nil, err
	}
	if cfg.HSM != nil {
		s.sync = newSyncer(cfg.HSM, cfg.Sync)
		s.lookups = make(chan string, 1024)
	}
	return s, nil
}

// Cache is the service's HSM cache (the DHCP server asks it which MACs are known).
func (s *Service) Cache() *Cache { return s.cache }

// Subscribed is closed once HSM holds BSS's SCN subscription (at once
// without HSM or without a callback URL).
func (s *Service) Subscribed() <-chan struct{} {
	if s.sync == nil {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	return s.sync.subscribed
}

// historyFlush is how often the endpoint history is written.
const historyFlush = time.Second

// Run keeps the cache fresh and writes the endpoint history until ctx is
// cancelled, then writes what history is left.
func (s *Service) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.RunSync(gctx) })
	g.Go(func() error {
		t := time.NewTicker(historyFlush)
		defer t.Stop()
		for {
			select {
			case <-gctx.Done():
				fctx, cancel := context.WithTimeout(context.WithoutCancel(gctx), 5*time.Second)
				defer cancel()
				return s.store.flushHistory(fctx, s.hist)
			case <-t.C:
				if err := s.store.flushHistory(gctx, s.hist); err != nil {
					s.log.Warn("history_flush_failed", "err", err)
				}
			}
		}
	})
	return g.Wait()
}
