package ipxe

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// history is the endpoint-history table. A boot storm fetches thousands of
// scripts a second, so an access only updates memory, which the API
// answers from; flushHistory writes the changes in one transaction (the
// daemon calls it every second and on shutdown). A node's stored time is
// rewritten only once it is persistEvery old: a node that refetches in a
// loop costs one row write per persistEvery, not one per fetch. A crash
// loses at most that much of a "last seen" time.
type history struct {
	mu     sync.Mutex
	last   map[historyKey]int64
	stored map[historyKey]int64
	dirty  map[historyKey]int64
}

// persistEvery is how stale a node's stored access time may get.
const persistEvery = 30

type historyKey struct{ name, endpoint string }

func newHistory() *history {
	return &history{last: map[historyKey]int64{}, stored: map[historyKey]int64{}, dirty: map[historyKey]int64{}}
}

// touch records that name fetched endpoint at t.
func (h *history) touch(name, endpoint string, t time.Time) {
	k := historyKey{name, endpoint}
	sec := t.Unix()
	h.mu.Lock()
	if h.last[k] != sec {
		h.last[k] = sec
		if st, ok := h.stored[k]; !ok || sec-st >= persistEvery || sec < st {
			h.dirty[k] = sec
		}
	}
	h.mu.Unlock()
}

// load reads the stored history.
func (h *history) load(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT name, endpoint, last_epoch FROM endpoint_access`)
	if err != nil {
		return fmt.Errorf("load endpoint history: %w", err)
	}
	defer rows.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	for rows.Next() {
		var k historyKey
		var t int64
		if err := rows.Scan(&k.name, &k.endpoint, &t); err != nil {
			return fmt.Errorf("load endpoint history: %w", err)
		}
		h.last[k], h.stored[k] = t, t
	}
	return rows.Err()
}

// flush writes the accesses recorded since the last flush.
func (s *Store) flushHistory(ctx context.Context, h *history) error {
	h.mu.Lock()
	dirty := h.dirty
	h.dirty = map[historyKey]int64{}
	h.mu.Unlock()
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
	if err == nil {
		h.mu.Lock()
		for k, t := range dirty {
			h.stored[k] = t
		}
		h.mu.Unlock()
	}
	if err != nil {
		// Keep what was not written for the next flush, unless newer accesses replaced it.
		h.mu.Lock()
		for k, t := range dirty {
			if _, ok := h.dirty[k]; !ok {
				h.dirty[k] = t
			}
		}
		h.mu.Unlock()
	}
	return err
}

// query answers GET endpoint-history: every record, a node's records, or
// (name and endpoint) exactly one record, 0 when never seen, as hms-bss
// does for the two endpoints it knows.
func (h *history) query(name, endpoint string) []EndpointAccess {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := []EndpointAccess{}
	if name != "" && endpoint != "" {
		ep := strings.ToLower(endpoint)
		t, ok := h.last[historyKey{name, ep}]
		if ok || ep == EndpointBootscript || ep == EndpointUserData {
			out = append(out, EndpointAccess{Name: name, Endpoint: ep, LastEpoch: t})
		}
		return out
	}
	for k, t := range h.last {
		if name == "" || k.name == name {
			out = append(out, EndpointAccess{Name: k.name, Endpoint: k.endpoint, LastEpoch: t})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Endpoint < out[j].Endpoint
	})
	return out
}
