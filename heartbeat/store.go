package heartbeat

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/internal/sqldb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// aliveKey is the hb_meta key of the time the tracker was last known running.
const aliveKey = "tracker_alive_at"

// AliveInterval is how often the tracker records that it is running, which is
// how a restart measures the gap.
const AliveInterval = 5 * time.Second

// Store persists node state transitions. As a Sink it coalesces changes and
// writes them in one transaction per batch.
//
// Each row also records which receivers (HSM, the bus) have not confirmed the
// node's last transition: Save marks it pending for every receiver in
// receivers, Ack clears it once the receiver took it, and a restarted hbtd
// sends what is still pending (see Service.restore), so a transition is not
// lost when hbtd stops before delivering it.
type Store struct {
	db  *sqldb.DB
	q   *queue
	log *slog.Logger
	now func() time.Time

	mu        sync.Mutex
	receivers []string
	// acked holds confirmations that may have arrived before Save wrote the
	// transition: receiver/xname -> the transition's time (unix ms).
	acked map[ackKey]int64
}

type ackKey struct{ receiver, xname string }

// unconfirmed says which receivers have not confirmed a transition.
type unconfirmed struct{ hsm, bus bool }

func (u *unconfirmed) set(receiver string, v bool) {
	switch receiver {
	case "hsm":
		u.hsm = v
	case "bus":
		u.bus = v
	}
}

// usedAck is a confirmation a Save relied on: key, and the time it confirmed.
type usedAck struct {
	key ackKey
	at  int64
}

// pendingColumn is the column that marks a transition as not yet confirmed
// by a receiver.
var pendingColumn = map[string]string{"hsm": "hsm_pending", "bus": "bus_pending"}

// SetReceivers names the receivers ("hsm", "bus") whose confirmation Save
// waits for. Call it before Run.
func (s *Store) SetReceivers(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.receivers = names
}

// OpenStore opens (creating and migrating) the SQLite database at path, or
// the PostgreSQL database a postgres:// path names (sqldb.Open).
func OpenStore(ctx context.Context, path string, log *slog.Logger, reg prometheus.Registerer) (*Store, error) {
	db, err := sqldb.OpenEmbedded(ctx, path, migrationFiles)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Store{db: db, now: time.Now, log: log, acked: map[ackKey]int64{}}
	s.q = newQueue("store", s.deliver, log, reg)
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Kind names the database: "SQLite" or "PostgreSQL" (/health's KvStore).
func (s *Store) Kind() string { return s.db.Engine() }

// Ping checks the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

// Enqueue queues changes to be written.
func (s *Store) Enqueue(changes ...Change) { s.q.Enqueue(changes...) }

// Pending is the number of nodes whose change is not written yet.
func (s *Store) Pending() int { return s.q.Len() }

// Run writes queued changes, and records every AliveInterval that the tracker
// is running, until ctx is cancelled.
func (s *Store) Run(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(AliveInterval)
		defer tk.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
				_ = s.MarkAlive(ctx, s.now())
			}
		}
	}()
	err := s.q.Run(ctx)
	<-done
	return err
}

func (s *Store) deliver(ctx context.Context, batch []Change) []Change {
	if err := s.Save(ctx, batch); err != nil {
		return batch
	}
	return nil
}

// Save writes changes in one transaction, each pending for every receiver
// that has not confirmed it already.
func (s *Store) Save(ctx context.Context, changes []Change) error {
	var used []usedAck
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		st, err := s.db.Stmt(ctx, tx, `INSERT INTO hb_nodes (xname, state, last_hb, changed_at, prev_state, hsm_pending, bus_pending)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (xname) DO UPDATE SET state = excluded.state, last_hb = excluded.last_hb, changed_at = excluded.changed_at,
			prev_state = excluded.prev_state, hsm_pending = excluded.hsm_pending, bus_pending = excluded.bus_pending`)
		if err != nil {
			return err
		}
		// Read the confirmations inside the transaction: an Ack that is not
		// seen here updates the row after this transaction commits.
		var pending []unconfirmed
		pending, used = s.pendingFor(changes)
		for i, c := range changes {
			if _, err := st.ExecContext(ctx, c.XName, c.To.String(), c.LastHB.UnixMilli(), c.At.UnixMilli(), c.From.String(),
				pending[i].hsm, pending[i].bus); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save heartbeat states: %w", err)
	}
	s.forget(used)
	return nil
}

// pendingFor returns, per change, which receivers still have to confirm it,
// and the confirmations it used or found older than the change; those are
// forgotten (forget) once the transaction commits, so a retried or failed
// one still sees them.
func (s *Store) pendingFor(changes []Change) ([]unconfirmed, []usedAck) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]unconfirmed, len(changes))
	var used []usedAck
	for i, c := range changes {
		at := c.At.UnixMilli()
		for _, r := range s.receivers {
			k := ackKey{r, c.XName}
			got, ok := s.acked[k]
			out[i].set(r, !ok || got != at)
			if ok && got <= at {
				used = append(used, usedAck{key: k, at: got})
			}
		}
	}
	return out, used
}

// forget drops the confirmations a committed Save used, unless a newer one
// came meanwhile.
func (s *Store) forget(used []usedAck) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range used {
		if s.acked[u.key] == u.at {
			delete(s.acked, u.key)
		}
	}
}

// Ack records that receiver took changes (or refused them for good), so they
// are not sent again after a restart.
func (s *Store) Ack(ctx context.Context, receiver string, changes []Change) {
	col, ok := pendingColumn[receiver]
	if !ok || len(changes) == 0 {
		return
	}
	s.mu.Lock()
	for _, c := range changes {
		k := ackKey{receiver, c.XName}
		if at := c.At.UnixMilli(); at > s.acked[k] {
			s.acked[k] = at
		}
	}
	s.mu.Unlock()
	var saved []Change
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		saved = saved[:0]
		st, err := s.db.Stmt(ctx, tx, `UPDATE hb_nodes SET `+col+` = 0 WHERE xname = ? AND changed_at = ?`)
		if err != nil {
			return err
		}
		for _, c := range changes {
			res, err := st.ExecContext(ctx, c.XName, c.At.UnixMilli())
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n > 0 {
				saved = append(saved, c)
			}
		}
		return nil
	})
	if err != nil {
		// The rows stay pending: a restart sends them once more.
		s.log.Warn("heartbeat_ack_not_saved", "receiver", receiver, "changes", len(changes), "err", err)
		return
	}
	// Those already written need no confirmation at Save any more.
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range saved {
		k := ackKey{receiver, c.XName}
		if s.acked[k] == c.At.UnixMilli() {
			delete(s.acked, k)
		}
	}
}

// Load returns every persisted node.
func (s *Store) Load(ctx context.Context) ([]Record, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT xname, state, last_hb, changed_at, prev_state, hsm_pending, bus_pending FROM hb_nodes`)
	if err != nil {
		return nil, fmt.Errorf("load heartbeat states: %w", err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		var (
			r           Record
			state, prev string
			last, chgAt int64
		)
		if err := rows.Scan(&r.XName, &state, &last, &chgAt, &prev, &r.PendingHSM, &r.PendingBus); err != nil {
			return nil, fmt.Errorf("load heartbeat states: %w", err)
		}
		r.State, r.LastHB, r.ChangedAt = parseState(state), time.UnixMilli(last), time.UnixMilli(chgAt)
		r.Prev = parseState(prev)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load heartbeat states: %w", err)
	}
	return out, nil
}

// MarkAlive records that the tracker is running at t.
func (s *Store) MarkAlive(ctx context.Context, t time.Time) error {
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO hb_meta (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, aliveKey, strconv.FormatInt(t.UnixMilli(), 10))
		return err
	})
}

// paramsKey is the hb_meta key of the parameters PATCH /params set.
const paramsKey = "params"

// SaveParams stores the parameter values PATCH set, by name.
func (s *Store) SaveParams(ctx context.Context, patched map[string]string) error {
	b, err := json.Marshal(patched)
	if err != nil {
		return fmt.Errorf("encode params: %w", err)
	}
	err = s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO hb_meta (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, paramsKey, string(b))
		return err
	})
	if err != nil {
		return fmt.Errorf("store params: %w", err)
	}
	return nil
}

// LoadParams returns the parameter values PATCH set, if any.
func (s *Store) LoadParams(ctx context.Context) (map[string]string, error) {
	var v string
	err := s.db.R.QueryRowContext(ctx, `SELECT value FROM hb_meta WHERE key = ?`, paramsKey).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read params: %w", err)
	}
	var out map[string]string
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		return nil, fmt.Errorf("read params %q: %w", v, err)
	}
	return out, nil
}

// LastAlive returns when the tracker was last known running; ok is false on a
// fresh database.
func (s *Store) LastAlive(ctx context.Context) (t time.Time, ok bool, err error) {
	var v string
	err = s.db.R.QueryRowContext(ctx, `SELECT value FROM hb_meta WHERE key = ?`, aliveKey).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read tracker alive time: %w", err)
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read tracker alive time %q: %w", v, err)
	}
	return time.UnixMilli(ms), true, nil
}
