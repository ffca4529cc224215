package auth

import (
	"container/list"
	"crypto/sha256"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultCacheSize is how many verified tokens a Verifier remembers: one per
// node of a 10,000-node system heartbeating with its node token, plus the
// site's users and services, several times over.
const DefaultCacheSize = 65536

// tokenCache remembers the tokens a Verifier accepted, so a token presented
// again (a node's heartbeat every 10 s, a service's calls) is not checked
// against its signature again: about 85 us and 187 allocations a request
// before it. Its key is the SHA-256 of the raw token: the token itself,
// which anyone holding it could replay, is never kept. An entry is used
// only before the token's exp and while the key set it was verified with
// has not changed (keySet.current); refusals are never cached, so a
// tampered token always takes the full check. Bounded, least recently used
// first out. The suite has no token revocation (no deny list, no
// invalidation of bss's node tokens: they expire), so nothing else can
// make an entry wrong; one that adds it must drop the entries it revokes.
type tokenCache struct {
	max int
	now func() time.Time
	mu  sync.Mutex
	m   map[[sha256.Size]byte]*list.Element
	lru list.List // of *cacheEntry, most recently used first

	hits, misses, evictions atomic.Uint64
}

type cacheEntry struct {
	sum [sha256.Size]byte
	p   Principal
	exp time.Time // the token's exp: the entry is not used from then on
	ks  *keySet   // the key set the token verified with
	gen uint64    // its generation then
}

func newTokenCache(max int, now func() time.Time) *tokenCache {
	if max <= 0 {
		return nil
	}
	return &tokenCache{max: max, now: now, m: make(map[[sha256.Size]byte]*list.Element)}
}

// get returns the caller of the token whose hash is sum, if it verified
// before, has not expired and its key set has not changed since.
func (c *tokenCache) get(sum *[sha256.Size]byte) (Principal, bool) {
	c.mu.Lock()
	el, ok := c.m[*sum]
	if !ok {
		c.mu.Unlock()
		c.misses.Add(1)
		return Principal{}, false
	}
	e := el.Value.(*cacheEntry)
	if !c.now().Before(e.exp) || !e.ks.current(e.gen) {
		c.lru.Remove(el)
		delete(c.m, *sum)
		c.mu.Unlock()
		c.misses.Add(1)
		return Principal{}, false
	}
	c.lru.MoveToFront(el)
	p := e.p
	c.mu.Unlock()
	c.hits.Add(1)
	return p, true
}

// put remembers that the token whose hash is sum names p until exp,
// verified with ks at generation gen; the least recently used entry goes
// when the cache is full.
func (c *tokenCache) put(sum *[sha256.Size]byte, p Principal, exp time.Time, ks *keySet, gen uint64) {
	if !c.now().Before(exp) {
		return // accepted within the skew: not worth keeping
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[*sum]; ok {
		e := el.Value.(*cacheEntry)
		e.p, e.exp, e.ks, e.gen = p, exp, ks, gen
		c.lru.MoveToFront(el)
		return
	}
	for c.lru.Len() >= c.max {
		old := c.lru.Back()
		delete(c.m, old.Value.(*cacheEntry).sum)
		c.lru.Remove(old)
		c.evictions.Add(1)
	}
	c.m[*sum] = c.lru.PushFront(&cacheEntry{sum: *sum, p: p, exp: exp, ks: ks, gen: gen})
}

// len is how many tokens the cache holds.
func (c *tokenCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// register puts the cache's metrics on reg: hms_auth_token_cache_hits_total,
// _misses_total, _evictions_total and hms_auth_token_cache_entries.
func (c *tokenCache) register(reg prometheus.Registerer) {
	if c == nil || reg == nil {
		return
	}
	counter := func(name, help string, n *atomic.Uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return float64(n.Load()) })
	}
	reg.MustRegister(
		counter("hms_auth_token_cache_hits_total", "Tokens found verified in the token cache (signature not checked again).", &c.hits),
		counter("hms_auth_token_cache_misses_total", "Tokens not in the token cache, or whose entry expired or whose key set changed: checked in full.", &c.misses),
		counter("hms_auth_token_cache_evictions_total", "Verified tokens dropped from the full token cache, least recently used first.", &c.evictions),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hms_auth_token_cache_entries",
			Help: "Verified tokens held in the token cache."}, func() float64 { return float64(c.len()) }),
	)
}
