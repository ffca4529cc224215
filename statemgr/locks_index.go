package statemgr

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// resv is a reservation's times in the in-memory index (Unix ms); expires 0
// means never.
type resv struct{ created, expires int64 }

// active reports whether r is a reservation valid at now (Unix ms).
func (r resv) active(now int64) bool { return r.created != 0 && (r.expires == 0 || r.expires > now) }

// resvIndex is the in-memory copy of the reservations table's times, for
// GET /locks/status. It is loaded at open and updated after each commit that
// changes reservations: the locks code holds Store.resvMu from its
// transaction to its update, and component deletes (which cascade) drop
// theirs after their commit, also under resvMu.
//
// Lock order: index.mu before resvIndex.mu; no writer holds both.
type resvIndex struct {
	mu sync.RWMutex
	by map[string]resv
}

// loadReservations fills the reservation index from SQLite.
func (s *Store) loadReservations(ctx context.Context) error {
	rows, err := s.db.R.QueryContext(ctx, `SELECT component_id, created_at, expires_at FROM reservations`)
	if err != nil {
		return fmt.Errorf("load reservations: %w", err)
	}
	defer rows.Close()
	rx := &resvIndex{by: map[string]resv{}}
	for rows.Next() {
		var id string
		var r resv
		var exp sql.NullInt64
		if err := rows.Scan(&id, &r.created, &exp); err != nil {
			return fmt.Errorf("load reservations: %w", err)
		}
		r.expires = exp.Int64
		rx.by[id] = r
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load reservations: %w", err)
	}
	s.rx = rx
	return nil
}

// reserved publishes committed reservations.
func (rx *resvIndex) reserved(keys []hsm.ReservationKeys, now time.Time) {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	for _, k := range keys {
		r := resv{created: now.UnixMilli()}
		if k.ExpirationTime != nil {
			r.expires = k.ExpirationTime.UnixMilli()
		}
		rx.by[k.ID] = r
	}
}

// renewed publishes committed renewals: non-expiring reservations stay so.
func (rx *resvIndex) renewed(ids []string, expires int64) {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	for _, id := range ids {
		if r, ok := rx.by[id]; ok && r.expires != 0 {
			r.expires = expires
			rx.by[id] = r
		}
	}
}

// dropped publishes committed deletes of the reservations of ids.
func (rx *resvIndex) dropped(ids []string) {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	for _, id := range ids {
		delete(rx.by, id)
	}
}

// droppedAll publishes the delete of every reservation (every component gone).
func (rx *resvIndex) droppedAll() {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	rx.by = map[string]resv{}
}

// reaped publishes a committed delete of the reservations expired at now.
func (rx *resvIndex) reaped(now int64) {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	for id, r := range rx.by {
		if r.expires != 0 && r.expires <= now {
			delete(rx.by, id)
		}
	}
}

// statusJSON returns the body of GET /locks/status for the components f
// selects whose lock state want accepts, encoded by hand from the indexes:
// encoding/json costs more than the rest for 100,000 components.
func (s *Store) statusJSON(f Filter, want glStatusWant) []byte {
	now := s.now().UnixMilli()
	var b []byte
	s.withGroups(&f, func(all []*record) {
		s.rx.mu.RLock()
		defer s.rx.mu.RUnlock()
		b = make([]byte, 0, 64+len(all)*96)
		b = append(b, `{"Components":[`...)
		first := true
		for _, r := range all {
			if !f.match(r) {
				continue
			}
			st := s.rx.by[r.ID]
			reserved := st.active(now)
			if !want.accepts(r.Locked, reserved, r.ReservationDisabled) {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendLockStatus(b, r, st, reserved)
		}
		b = append(b, "]}\n"...) // NotFound is omitted when empty, as shipped
	})
	return b
}

// lockStatus returns the LockStatus of r, whose reservation is st, at now
// (Unix ms).
func lockStatus(r *record, st resv, now int64) hsm.LockStatus {
	ls := hsm.LockStatus{ID: r.ID, Locked: r.Locked, ReservationDisabled: r.ReservationDisabled, Reserved: st.active(now)}
	if ls.Reserved {
		c := time.UnixMilli(st.created).UTC()
		ls.CreatedTime = &c
		if st.expires != 0 {
			e := time.UnixMilli(st.expires).UTC()
			ls.ExpirationTime = &e
		}
	}
	return ls
}

// appendLockStatus appends the JSON of r's LockStatus as encoding/json writes it.
func appendLockStatus(b []byte, r *record, st resv, reserved bool) []byte {
	b = append(b, `{"ID":`...)
	b = appendString(b, r.ID)
	b = append(b, `,"Locked":`...)
	b = strconv.AppendBool(b, r.Locked)
	b = append(b, `,"Reserved":`...)
	b = strconv.AppendBool(b, reserved)
	if reserved {
		b = append(b, `,"CreatedTime":"`...)
		b = time.UnixMilli(st.created).UTC().AppendFormat(b, time.RFC3339Nano)
		if st.expires != 0 {
			b = append(b, `","ExpirationTime":"`...)
			b = time.UnixMilli(st.expires).UTC().AppendFormat(b, time.RFC3339Nano)
		}
		b = append(b, '"')
	}
	b = append(b, `,"ReservationDisabled":`...)
	b = strconv.AppendBool(b, r.ReservationDisabled)
	return append(b, '}')
}
