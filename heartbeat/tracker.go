package heartbeat

import (
	"context"
	"hash/maphash"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
)

// Tick is the resolution of deadline detection: a silent node is noticed at most
// one Tick after its deadline.
const Tick = 100 * time.Millisecond

const (
	numShards  = 64   // power of two; spreads lock contention over cores
	wheelSlots = 1024 // one turn of the wheel is wheelSlots*Tick
)

// Sink receives state changes. Enqueue must not block; sinks queue and
// coalesce internally.
type Sink interface {
	Enqueue(changes ...Change)
}

// Config holds the Tracker's settings.
type Config struct {
	// Warntime and Errtime are the silences after which a node is warned about
	// and declared dead.
	Warntime, Errtime time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log receives gap and transition logs; nil discards.
	Log *slog.Logger
	// Registerer receives the tracker's metrics; nil registers nowhere.
	Registerer prometheus.Registerer
}

// Tracker keeps the last-seen time of every node that ever beat and detects
// nodes whose heartbeats stop. It is safe for concurrent use.
type Tracker struct {
	seed    maphash.Seed
	shards  [numShards]shard
	warn    atomic.Int64 // nanoseconds
	errt    atomic.Int64 // nanoseconds
	now     func() time.Time
	log     *slog.Logger
	sinks   []Sink
	metrics *trackerMetrics

	// Only Run touches these.
	lastTick int64
}

// node is the per-node record, kept small: 48 bytes plus its index entry.
type node struct {
	name  string
	last  int64 // when the tracker last heard from the node, unix ns
	sent  int64 // the node's own time stamp of that beat, unix ns
	due   int64 // wheel tick of the node's live entry; 0: none
	state State
}

// entry is a wheel entry. Entries are never removed: one whose tick is not its
// node's due tick any more was superseded by an earlier one and is skipped.
type entry struct {
	idx  uint32
	tick uint32 // low bits of the tick; a wrap takes 13 years
}

type shard struct {
	mu     sync.Mutex
	index  map[string]uint32
	nodes  []node
	counts [4]int
	cursor int64 // last wheel tick processed
	wheel  [wheelSlots][]entry
	spare  []entry
	_      [64]byte // keep neighbouring shards' locks off one cache line
}

// NewTracker returns a tracker that reports changes to sinks.
func NewTracker(cfg Config, sinks ...Sink) *Tracker {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	t := &Tracker{seed: maphash.MakeSeed(), now: cfg.Now, log: cfg.Log, sinks: sinks}
	t.warn.Store(int64(cfg.Warntime))
	t.errt.Store(int64(cfg.Errtime))
	now := t.now().UnixNano()
	for i := range t.shards {
		t.shards[i].index = map[string]uint32{}
		t.shards[i].cursor = now / int64(Tick)
	}
	t.lastTick = now
	t.metrics = newTrackerMetrics(cfg.Registerer, t)
	return t
}

// Thresholds returns the current Warntime and Errtime.
func (t *Tracker) Thresholds() (warn, errt time.Duration) {
	return time.Duration(t.warn.Load()), time.Duration(t.errt.Load())
}

// SetThresholds changes Warntime and Errtime live. Nodes already late by the new
// values are caught at the next tick.
func (t *Tracker) SetThresholds(warn, errt time.Duration) {
	oldWarn, oldErr := t.Thresholds()
	t.warn.Store(int64(warn))
	t.errt.Store(int64(errt))
	if warn < oldWarn || errt < oldErr {
		t.reschedule()
	}
}

func (t *Tracker) shard(name string) *shard {
	return &t.shards[maphash.String(t.seed, name)&(numShards-1)]
}

// Beat records a heartbeat from the node named by a valid xname.
func (t *Tracker) Beat(name string, sent time.Time) error {
	if !xname.Valid(name) {
		return problem.Invalidf("%q is not a valid xname", name)
	}
	t.beats([]beat{{name: xname.Normalize(name), sent: sent.UnixNano()}})
	return nil
}

// beatOne records one validated heartbeat.
func (t *Tracker) beatOne(b beat) {
	now := t.now().UnixNano()
	ch, changed := t.shard(b.name).beat(&b, now, t.warn.Load())
	t.metrics.beats.Inc()
	if changed {
		t.emit([]Change{ch})
	}
}

// beats records validated heartbeats, all received now.
func (t *Tracker) beats(bs []beat) {
	now := t.now().UnixNano()
	warn := t.warn.Load()
	var changes []Change
	for i := range bs {
		if ch, ok := t.shard(bs[i].name).beat(&bs[i], now, warn); ok {
			changes = append(changes, ch)
		}
	}
	t.metrics.beats.Add(float64(len(bs)))
	t.emit(changes)
}

func (sh *shard) beat(b *beat, now, warn int64) (Change, bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	idx, ok := sh.index[b.name]
	if !ok {
		idx = sh.add(strings.Clone(b.name))
	}
	n := &sh.nodes[idx]
	n.last, n.sent = now, b.sent
	// Steady beats leave the wheel alone: the entry due at the previous
	// deadline finds the new one when it fires. Only a node without an entry,
	// or whose entry is for a later (Errtime) deadline, needs a new one.
	if n.due == 0 || n.due > tickOf(now+warn) {
		sh.schedule(idx, now+warn)
	}
	if n.state == Alive {
		return Change{}, false
	}
	ch := Change{XName: n.name, From: n.state, To: Alive, LastHB: time.Unix(0, b.sent), At: time.Unix(0, now)}
	sh.setState(n, Alive)
	return ch, true
}

func (sh *shard) add(name string) uint32 {
	idx := uint32(len(sh.nodes))
	sh.nodes = append(sh.nodes, node{name: name})
	sh.index[name] = idx
	sh.counts[Unknown]++
	return idx
}

func (sh *shard) setState(n *node, s State) {
	sh.counts[n.state]--
	sh.counts[s]++
	n.state = s
}

// tickOf is the first wheel tick at or after t (unix ns).
func tickOf(t int64) int64 { return (t + int64(Tick) - 1) / int64(Tick) }

// schedule gives node idx a wheel entry at deadline (unix ns), or at the next
// tick if the deadline has passed; an older entry of the node becomes stale.
func (sh *shard) schedule(idx uint32, deadline int64) {
	tk := max(tickOf(deadline), sh.cursor+1)
	slot := tk % wheelSlots
	sh.wheel[slot] = append(sh.wheel[slot], entry{idx: idx, tick: uint32(tk)})
	sh.nodes[idx].due = tk
}

// Forget makes the named nodes (normalised xnames) that are alive or
// warned unknown again, as if they had never beaten: their next heartbeat
// is "Heartbeat started". HSM says their power changed (see Service.SCN).
// The change (to Unknown) is persisted; HSM and the bus are not told of it.
func (t *Tracker) Forget(names []string) {
	now := t.now().UnixNano()
	var changes []Change
	for _, name := range names {
		sh := t.shard(name)
		sh.mu.Lock()
		if idx, ok := sh.index[name]; ok {
			n := &sh.nodes[idx]
			if n.state == Alive || n.state == Warned {
				changes = append(changes, Change{XName: n.name, From: n.state, To: Unknown, LastHB: time.Unix(0, n.sent), At: time.Unix(0, now)})
				sh.setState(n, Unknown)
			}
		}
		sh.mu.Unlock()
	}
	t.emit(changes)
}

// State returns the tracker state of the node named by a normalised xname.
func (t *Tracker) State(name string) State {
	sh := t.shard(name)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if idx, ok := sh.index[name]; ok {
		return sh.nodes[idx].state
	}
	return Unknown
}

// Run checks deadlines every Tick until ctx is cancelled.
func (t *Tracker) Run(ctx context.Context) error {
	t.lastTick = t.now().UnixNano()
	tk := time.NewTicker(Tick)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tk.C:
			t.step()
		}
	}
}

// step advances every shard's wheel to now, after making up for any pause of
// the tracker itself.
func (t *Tracker) step() {
	now := t.now().UnixNano()
	if gap := time.Duration(now - t.lastTick); gap > time.Second {
		t.gap(now, gap)
	}
	t.lastTick = now
	warn, errt := t.warn.Load(), t.errt.Load()
	var changes []Change
	for i := range t.shards {
		changes = t.shards[i].advance(now, warn, errt, changes)
	}
	t.emit(changes)
}

// gap handles a pause of the tracker (process stopped, VM suspended): during a
// pause beats were not read, so the pause must not count against the nodes.
// A pause over Errtime gives every node a full Errtime of grace, as a restart does.
func (t *Tracker) gap(now int64, gap time.Duration) {
	errt := t.errt.Load()
	full := int64(gap) > errt
	t.metrics.gaps.Inc()
	t.log.Warn("tracker_gap", "gap", gap, "full_grace", full)
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.Lock()
		for j := range sh.nodes {
			n := &sh.nodes[j]
			if n.state != Alive && n.state != Warned {
				continue
			}
			if full {
				n.last = now
			} else {
				n.last += int64(gap) - int64(Tick)
			}
		}
		sh.mu.Unlock()
	}
}

func (sh *shard) advance(now, warn, errt int64, out []Change) []Change {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	target := now / int64(Tick)
	sh.cursor = max(sh.cursor, target-wheelSlots)
	for sh.cursor < target {
		sh.cursor++
		slot := sh.cursor % wheelSlots
		fired := sh.wheel[slot]
		sh.wheel[slot] = sh.spare[:0]
		for _, e := range fired {
			n := &sh.nodes[e.idx]
			switch {
			case uint32(n.due) != e.tick: // superseded
			case n.due > sh.cursor: // more than a turn ahead
				sh.wheel[slot] = append(sh.wheel[slot], e)
			default:
				n.due = 0
				if ch, ok := sh.check(e.idx, now, warn, errt); ok {
					out = append(out, ch)
				}
			}
		}
		clear(fired)
		sh.spare = fired[:0]
	}
	return out
}

// check applies the deadlines to one node whose wheel entry fired.
func (sh *shard) check(idx uint32, now, warn, errt int64) (Change, bool) {
	n := &sh.nodes[idx]
	age := now - n.last
	var to State
	switch {
	case n.state != Alive && n.state != Warned:
		return Change{}, false
	case age >= errt:
		to = Dead
	case n.state == Alive && age >= warn:
		to = Warned
		sh.schedule(idx, n.last+errt)
	case n.state == Alive:
		sh.schedule(idx, n.last+warn)
		return Change{}, false
	default:
		sh.schedule(idx, n.last+errt)
		return Change{}, false
	}
	ch := Change{XName: n.name, From: n.state, To: to, LastHB: time.Unix(0, n.sent), At: time.Unix(0, now)}
	sh.setState(n, to)
	return ch, true
}

// reschedule rebuilds every wheel, after thresholds were lowered.
func (t *Tracker) reschedule() {
	warn, errt := t.warn.Load(), t.errt.Load()
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.Lock()
		for s := range sh.wheel {
			sh.wheel[s] = sh.wheel[s][:0]
		}
		for j := range sh.nodes {
			n := &sh.nodes[j]
			n.due = 0
			switch n.state {
			case Alive:
				sh.schedule(uint32(j), n.last+warn)
			case Warned:
				sh.schedule(uint32(j), n.last+errt)
			}
		}
		sh.mu.Unlock()
	}
}

func (t *Tracker) emit(changes []Change) {
	if len(changes) == 0 {
		return
	}
	for _, c := range changes {
		t.metrics.transitions.WithLabelValues(c.To.String()).Inc()
		// Every transition at INFO: an operator asking "when did this node
		// stop?" finds the answer in the log. Transitions are rare next to
		// heartbeats, so this costs little even at 100,000 nodes.
		t.log.Info("heartbeat_state_changed", "xname", c.XName, "from", c.From, "to", c.To, "last_heartbeat", c.LastHB)
	}
	for _, s := range t.sinks {
		s.Enqueue(changes...)
	}
}

// Counts returns the number of tracked nodes in each state, indexed by State.
func (t *Tracker) Counts() [4]int {
	var out [4]int
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.Lock()
		for s, n := range sh.counts {
			out[s] += n
		}
		sh.mu.Unlock()
	}
	return out
}

// RecordGap counts and logs a gap the caller found, such as the downtime
// between a previous run and this one.
func (t *Tracker) RecordGap(gap time.Duration) {
	t.metrics.gaps.Inc()
	t.log.Warn("tracker_gap", "gap", gap, "full_grace", true)
}
