package heartbeat

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strconv"
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
type Store struct {
	db  *sqldb.DB
	q   *queue
	now func() time.Time
}

// OpenStore opens (creating and migrating) the SQLite database at path.
func OpenStore(ctx context.Context, path string, log *slog.Logger, reg prometheus.Registerer) (*Store, error) {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("hbtd migrations: %w", err)
	}
	db, err := sqldb.Open(ctx, path, sub)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Store{db: db, now: time.Now}
	s.q = newQueue("store", s.deliver, log, reg)
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

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

// Save writes changes in one transaction.
func (s *Store) Save(ctx context.Context, changes []Change) error {
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `INSERT INTO hb_nodes (xname, state, last_hb, changed_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (xname) DO UPDATE SET state = excluded.state, last_hb = excluded.last_hb, changed_at = excluded.changed_at`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, c := range changes {
			if _, err := st.ExecContext(ctx, c.XName, c.To.String(), c.LastHB.UnixMilli(), c.At.UnixMilli()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save heartbeat states: %w", err)
	}
	return nil
}

// Load returns every persisted node.
func (s *Store) Load(ctx context.Context) ([]Record, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT xname, state, last_hb, changed_at FROM hb_nodes`)
	if err != nil {
		return nil, fmt.Errorf("load heartbeat states: %w", err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		var (
			r           Record
			state       string
			last, chgAt int64
		)
		if err := rows.Scan(&r.XName, &state, &last, &chgAt); err != nil {
			return nil, fmt.Errorf("load heartbeat states: %w", err)
		}
		r.State, r.LastHB, r.ChangedAt = parseState(state), time.UnixMilli(last), time.UnixMilli(chgAt)
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
