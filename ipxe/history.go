package ipxe

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// history is the endpoint-history table. A boot storm fetches thousands of
// scripts a second, so an access takes no lock and writes nothing: it
// stores the second in the node's slot (sync.Map finds the slot without a
// lock once the node has been seen; atomics hold the times), which the API
// answers from. flushHistory, which the daemon calls every second and on
// shutdown, finds the slots that changed and writes them in one
// transaction. A node's stored time is rewritten only once it is
// persistEvery old: a node that refetches in a loop costs one row write per
// persistEvery, not one per fetch. A crash loses at most that much of a
// "last seen" time.
type history struct {
	seen sync.Map // name -> *seen: the endpoints nodes fetch (touch)

	mu    sync.Mutex
	other map[historyKey]*slot // loaded rows of endpoints touch never records
}

// persistEvery is how stale a node's stored access time may get.
const persistEvery = 30

type historyKey struct{ name, endpoint string }

// slot is one node's last access to one endpoint: last is what the API
// shows, stored what the database holds (0: nothing); only flush and load
// write stored.
type slot struct{ last, stored atomic.Int64 }

// seen is a node's slots for the endpoints it fetches.
type seen struct{ bootscript, userData slot }

func (s *seen) slot(endpoint string) *slot {
	switch endpoint {
	case EndpointBootscript:
		return &s.bootscript
	case EndpointUserData:
		return &s.userData
	}
	return nil
}

func newHistory() *history { return &history{other: map[historyKey]*slot{}} }

// slot returns the slot of name and endpoint, made if create (nil if not
// found and not create).
func (h *history) slot(name, endpoint string, create bool) *slot {
	if v, ok := h.seen.Load(name); ok {
		if sl := v.(*seen).slot(endpoint); sl != nil {
			return sl
		}
	} else if create && (endpoint == EndpointBootscript || endpoint == EndpointUserData) {
		v, _ := h.seen.LoadOrStore(name, &seen{})
		return v.(*seen).slot(endpoint)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	k := historyKey{name, endpoint}
	sl := h.other[k]
	if sl == nil && create {
		sl = &slot{}
		h.other[k] = sl
	}
	return sl
}

// touch records that name fetched endpoint at t.
func (h *history) touch(name, endpoint string, t time.Time) {
	sl := h.slot(name, endpoint, true)
	if sec := t.Unix(); sl.last.Load() != sec {
		sl.last.Store(sec)
	}
}

// dirty reports whether sl is due for writing: its time changed and the
// stored one is persistEvery old (or newer: the clock went back).
func (sl *slot) dirty() (int64, bool) {
	last, st := sl.last.Load(), sl.stored.Load()
	return last, last != st && (st == 0 || last-st >= persistEvery || last < st)
}

// each calls fn for every slot.
func (h *history) each(fn func(k historyKey, sl *slot)) {
	h.seen.Range(func(name, v any) bool {
		s := v.(*seen)
		fn(historyKey{name.(string), EndpointBootscript}, &s.bootscript)
		fn(historyKey{name.(string), EndpointUserData}, &s.userData)
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, sl := range h.other {
		fn(k, sl)
	}
}

// pending is the rows the next flush writes.
func (h *history) pending() map[historyKey]int64 {
	out := map[historyKey]int64{}
	h.each(func(k historyKey, sl *slot) {
		if t, ok := sl.dirty(); ok {
			out[k] = t
		}
	})
	return out
}

// load reads the stored history.
func (h *history) load(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT name, endpoint, last_epoch FROM endpoint_access`)
	if err != nil {
		return fmt.Errorf("load endpoint history: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k historyKey
		var t int64
		if err := rows.Scan(&k.name, &k.endpoint, &t); err != nil {
			return fmt.Errorf("load endpoint history: %w", err)
		}
		sl := h.slot(k.name, k.endpoint, true)
		sl.last.Store(t)
		sl.stored.Store(t)
	}
	return rows.Err()
}

// flush writes the accesses recorded since the last flush; what fails to
// be written stays due for the next.
func (s *Store) flushHistory(ctx context.Context, h *history) error {
	dirty := h.pending()
	if len(dirty) == 0 {
		return nil
	}
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		st, err := s.db.Stmt(ctx, tx, `INSERT INTO endpoint_access (name, endpoint, last_epoch) VALUES (?, ?, ?)
			ON CONFLICT (name, endpoint) DO UPDATE SET last_epoch = excluded.last_epoch`)
		if err != nil {
			return fmt.Errorf("store endpoint history: %w", err)
		}
		for k, t := range dirty {
			if _, err := st.ExecContext(ctx, k.name, k.endpoint, t); err != nil {
				return fmt.Errorf("store endpoint history: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for k, t := range dirty {
		h.slot(k.name, k.endpoint, false).stored.Store(t)
	}
	return nil
}

// query answers GET endpoint-history: every record, a node's records, or
// (name and endpoint) exactly one record, 0 when never seen, as hms-bss
// does for the two endpoints it knows.
func (h *history) query(name, endpoint string) []EndpointAccess {
	out := []EndpointAccess{}
	if name != "" && endpoint != "" {
		ep := strings.ToLower(endpoint)
		sl := h.slot(name, ep, false)
		var t int64
		if sl != nil {
			t = sl.last.Load()
		}
		if t != 0 || ep == EndpointBootscript || ep == EndpointUserData {
			out = append(out, EndpointAccess{Name: name, Endpoint: ep, LastEpoch: t})
		}
		return out
	}
	h.each(func(k historyKey, sl *slot) {
		if t := sl.last.Load(); t != 0 && (name == "" || k.name == name) {
			out = append(out, EndpointAccess{Name: k.name, Endpoint: k.endpoint, LastEpoch: t})
		}
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Endpoint < out[j].Endpoint
	})
	return out
}
