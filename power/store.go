package power

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"time"

	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/power/pcs"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Store keeps transitions and their tasks in SQLite or PostgreSQL. The Service holds them
// in memory too; the store is what survives a restart.
type Store struct {
	db *sqldb.DB
}

// OpenStore opens (creating if needed) the SQLite file at path, or the
// PostgreSQL database a postgres:// path names (sqldb.Open).
func OpenStore(ctx context.Context, path string) (*Store, error) {
	db, err := sqldb.OpenEmbedded(ctx, path, migrationFiles)
	if err != nil {
		return nil, err
	}
	return &Store{db: db}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping checks the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

// Create stores a new transition and its tasks.
func (s *Store) Create(ctx context.Context, tr *Transition) error {
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO transitions (id, operation, created_at, expires_at, status, deadline)
			VALUES (?, ?, ?, ?, ?, ?)`, tr.ID, string(tr.Operation), tr.Created.UnixNano(), tr.Expires.UnixNano(),
			tr.Status, tr.Deadline); err != nil {
			return fmt.Errorf("store transition: %w", err)
		}
		st, err := tx.PrepareContext(ctx, `INSERT INTO tasks (transition_id, xname, deputy_key, status, description, error, step, resv_key, ord)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return fmt.Errorf("store tasks: %w", err)
		}
		defer st.Close()
		for i, t := range tr.Tasks {
			if _, err := st.ExecContext(ctx, tr.ID, t.Xname, t.DeputyKey, t.Status, t.Description, t.Error, t.Step, t.ResvKey, i); err != nil {
				return fmt.Errorf("store task %s: %w", t.Xname, err)
			}
		}
		return nil
	})
}

// Save writes a transition's status and the given task snapshots.
func (s *Store) Save(ctx context.Context, id, status string, tasks []Task) error {
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE transitions SET status = ? WHERE id = ?`, status, id); err != nil {
			return fmt.Errorf("save transition: %w", err)
		}
		if len(tasks) == 0 {
			return nil
		}
		st, err := tx.PrepareContext(ctx, `UPDATE tasks SET status = ?, description = ?, error = ?, step = ?, resv_key = ?
			WHERE transition_id = ? AND xname = ?`)
		if err != nil {
			return fmt.Errorf("save tasks: %w", err)
		}
		defer st.Close()
		for _, t := range tasks {
			if _, err := st.ExecContext(ctx, t.Status, t.Description, t.Error, t.Step, t.ResvKey, id, t.Xname); err != nil {
				return fmt.Errorf("save task %s: %w", t.Xname, err)
			}
		}
		return nil
	})
}

// Delete removes transitions (and their tasks).
func (s *Store) Delete(ctx context.Context, ids []string) error {
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `DELETE FROM transitions WHERE id = ?`, id); err != nil {
				return fmt.Errorf("delete transition: %w", err)
			}
		}
		return nil
	})
}

// Load reads every stored transition with its tasks, oldest first.
func (s *Store) Load(ctx context.Context) ([]*Transition, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT id, operation, created_at, expires_at, status, deadline
		FROM transitions ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("load transitions: %w", err)
	}
	var out []*Transition
	byID := map[string]*Transition{}
	for rows.Next() {
		var tr Transition
		var op string
		var created, expires int64
		if err := rows.Scan(&tr.ID, &op, &created, &expires, &tr.Status, &tr.Deadline); err != nil {
			rows.Close()
			return nil, fmt.Errorf("load transitions: %w", err)
		}
		tr.Operation, tr.Created, tr.Expires = pcs.Operation(op), time.Unix(0, created).UTC(), time.Unix(0, expires).UTC()
		out = append(out, &tr)
		byID[tr.ID] = &tr
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load transitions: %w", err)
	}
	trows, err := s.db.R.QueryContext(ctx, `SELECT transition_id, xname, deputy_key, status, description, error, step, resv_key
		FROM tasks ORDER BY transition_id, ord`)
	if err != nil {
		return nil, fmt.Errorf("load tasks: %w", err)
	}
	defer trows.Close()
	for trows.Next() {
		var id string
		var t Task
		if err := trows.Scan(&id, &t.Xname, &t.DeputyKey, &t.Status, &t.Description, &t.Error, &t.Step, &t.ResvKey); err != nil {
			return nil, fmt.Errorf("load tasks: %w", err)
		}
		if tr := byID[id]; tr != nil {
			tr.Tasks = append(tr.Tasks, &t)
		}
	}
	return out, trows.Err()
}
