package core

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// Resv is a reservation's times in the in-memory index (Unix ms); expires 0
// means never.
type Resv struct{ Created, Expires int64 }

// Active reports whether r is a reservation valid at now (Unix ms).
func (r Resv) Active(now int64) bool { return r.Created != 0 && (r.Expires == 0 || r.Expires > now) }

// ResvIndex is the in-memory copy of the reservations table's times, for
// GET /locks/status. It is loaded at open and updated after each commit that
// changes reservations: the locks code holds Store.resvMu from its
// transaction to its update, and component deletes (which cascade) drop
// theirs after their commit, also under resvMu.
//
// Lock order: index.mu before resvIndex.mu; no writer holds both.
type ResvIndex struct {
	Mu sync.RWMutex
	By map[string]Resv
}

// loadReservations fills the reservation index from SQLite.
func (s *Store) loadReservations(ctx context.Context) error {
	rows, err := s.DB.R.QueryContext(ctx, `SELECT component_id, created_at, expires_at FROM reservations`)
	if err != nil {
		return fmt.Errorf("load reservations: %w", err)
	}
	defer rows.Close()
	rx := &ResvIndex{By: map[string]Resv{}}
	for rows.Next() {
		var id string
		var r Resv
		var exp sql.NullInt64
		if err := rows.Scan(&id, &r.Created, &exp); err != nil {
			return fmt.Errorf("load reservations: %w", err)
		}
		r.Expires = exp.Int64
		rx.By[id] = r
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load reservations: %w", err)
	}
	s.Rx = rx
	return nil
}

// Reserved publishes committed reservations.
func (rx *ResvIndex) Reserved(keys []hsm.ReservationKeys, now time.Time) {
	rx.Mu.Lock()
	defer rx.Mu.Unlock()
	for _, k := range keys {
		r := Resv{Created: now.UnixMilli()}
		if k.ExpirationTime != nil {
			r.Expires = k.ExpirationTime.UnixMilli()
		}
		rx.By[k.ID] = r
	}
}

// Renewed publishes committed renewals: non-expiring reservations stay so.
func (rx *ResvIndex) Renewed(ids []string, expires int64) {
	rx.Mu.Lock()
	defer rx.Mu.Unlock()
	for _, id := range ids {
		if r, ok := rx.By[id]; ok && r.Expires != 0 {
			r.Expires = expires
			rx.By[id] = r
		}
	}
}

// Dropped publishes committed deletes of the reservations of ids.
func (rx *ResvIndex) Dropped(ids []string) {
	rx.Mu.Lock()
	defer rx.Mu.Unlock()
	for _, id := range ids {
		delete(rx.By, id)
	}
}

// droppedAll publishes the delete of every reservation (every component gone).
func (rx *ResvIndex) droppedAll() {
	rx.Mu.Lock()
	defer rx.Mu.Unlock()
	rx.By = map[string]Resv{}
}

// Reaped publishes a committed delete of the reservations expired at now.
func (rx *ResvIndex) Reaped(now int64) {
	rx.Mu.Lock()
	defer rx.Mu.Unlock()
	for id, r := range rx.By {
		if r.Expires != 0 && r.Expires <= now {
			delete(rx.By, id)
		}
	}
}

// StatusJSON returns the body of GET /locks/status for the components f
// selects whose lock state want accepts, encoded by hand from the indexes:
// encoding/json costs more than the rest for 100,000 components.
func (s *Store) StatusJSON(f Filter, want StatusWant) []byte {
	now := s.Now().UnixMilli()
	var b []byte
	s.WithGroups(&f, func(all []*Record) {
		s.Rx.Mu.RLock()
		defer s.Rx.Mu.RUnlock()
		b = make([]byte, 0, 64+len(all)*96)
		b = append(b, `{"Components":[`...)
		first := true
		for _, r := range all {
			if !f.Match(r) {
				continue
			}
			st := s.Rx.By[r.ID]
			reserved := st.Active(now)
			if !want.accepts(r.Locked, reserved, r.ReservationDisabled) {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = AppendLockStatus(b, r, st, reserved)
		}
		b = append(b, "]}\n"...) // NotFound is omitted when empty, as shipped
	})
	return b
}

// LockStatus returns the LockStatus of r, whose reservation is st, at now
// (Unix ms).
func LockStatus(r *Record, st Resv, now int64) hsm.LockStatus {
	ls := hsm.LockStatus{ID: r.ID, Locked: r.Locked, ReservationDisabled: r.ReservationDisabled, Reserved: st.Active(now)}
	if ls.Reserved {
		c := time.UnixMilli(st.Created).UTC()
		ls.CreatedTime = &c
		if st.Expires != 0 {
			e := time.UnixMilli(st.Expires).UTC()
			ls.ExpirationTime = &e
		}
	}
	return ls
}

// AppendLockStatus appends the JSON of r's LockStatus as encoding/json writes it.
func AppendLockStatus(b []byte, r *Record, st Resv, reserved bool) []byte {
	b = append(b, `{"ID":`...)
	b = AppendString(b, r.ID)
	b = append(b, `,"Locked":`...)
	b = strconv.AppendBool(b, r.Locked)
	b = append(b, `,"Reserved":`...)
	b = strconv.AppendBool(b, reserved)
	if reserved {
		b = append(b, `,"CreatedTime":"`...)
		b = time.UnixMilli(st.Created).UTC().AppendFormat(b, time.RFC3339Nano)
		if st.Expires != 0 {
			b = append(b, `","ExpirationTime":"`...)
			b = time.UnixMilli(st.Expires).UTC().AppendFormat(b, time.RFC3339Nano)
		}
		b = append(b, '"')
	}
	b = append(b, `,"ReservationDisabled":`...)
	b = strconv.AppendBool(b, r.ReservationDisabled)
	return append(b, '}')
}
