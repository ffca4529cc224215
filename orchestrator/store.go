package orchestrator

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/sqldb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Store keeps templates, sessions, components and options in SQLite or
// PostgreSQL, each
// as its JSON document: BOS's records are documents, read and written whole.
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

// PutTemplate creates or replaces a template (of its tenant).
func (s *Store) PutTemplate(ctx context.Context, t Template) error {
	doc, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("encode template %s: %w", t.Name, err)
	}
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO templates (tenant, name, doc) VALUES (?, ?, ?)
			ON CONFLICT (tenant, name) DO UPDATE SET doc = excluded.doc`, t.Tenant, t.Name, string(doc))
		if err != nil {
			return fmt.Errorf("store template %s: %w", t.Name, err)
		}
		return nil
	})
}

// Template returns one template of a tenant ("": none) (ErrNotFound).
func (s *Store) Template(ctx context.Context, tenant, name string) (Template, error) {
	var t Template
	err := s.getDoc(ctx, `SELECT doc FROM templates WHERE tenant = ? AND name = ?`, &t, tenant, name)
	if errors.Is(err, sql.ErrNoRows) {
		return t, problem.NotFoundf("Session Template %s could not be found", name)
	}
	return t, err
}

// Templates lists the templates of a tenant by name; every template for "".
func (s *Store) Templates(ctx context.Context, tenant string) ([]Template, error) {
	if tenant == "" {
		return listDocs[Template](ctx, s, `SELECT 0, doc FROM templates ORDER BY name, tenant`, nil)
	}
	return listDocs[Template](ctx, s, `SELECT 0, doc FROM templates WHERE tenant = ? ORDER BY name`, nil, tenant)
}

// DeleteTemplate removes a template of a tenant (ErrNotFound).
func (s *Store) DeleteTemplate(ctx context.Context, tenant, name string) error {
	return s.deleteRow(ctx, `DELETE FROM templates WHERE tenant = ? AND name = ?`, "Session Template", name, tenant, name)
}

// UpdateSession replaces a stored session's document if it is still the
// version sess was read at (UPDATE ... WHERE version = ?), and moves sess
// to the new version. A session written meanwhile is ErrConflict (re-read
// and retry); one deleted meanwhile stays deleted (ErrNotFound) instead of
// being written back by an operator pass that read it before the DELETE.
func (s *Store) UpdateSession(ctx context.Context, sess *Session) error {
	doc, err := json.Marshal(sess)
	if err != nil {
		return fmt.Errorf("encode session %s: %w", sess.Name, err)
	}
	var n int64
	err = s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE sessions SET doc = ?, version = version + 1 WHERE name = ? AND version = ?`,
			string(doc), sess.Name, sess.version)
		if err != nil {
			return fmt.Errorf("store session %s: %w", sess.Name, err)
		}
		if n, err = res.RowsAffected(); err != nil || n > 0 {
			return err
		}
		var v int64
		err = tx.QueryRowContext(ctx, `SELECT version FROM sessions WHERE name = ?`, sess.Name).Scan(&v)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return problem.NotFoundf("Session %s could not be found", sess.Name)
		case err != nil:
			return fmt.Errorf("store session %s: %w", sess.Name, err)
		}
		return problem.Conflictf("Session %s was changed meanwhile (version %d, not %d)", sess.Name, v, sess.version)
	})
	if err == nil {
		sess.version++
	}
	return err
}

// CreateSession stores a new session; a session of that name is ErrConflict.
// It is one INSERT, so two creations of one name cannot both succeed (a
// check before an upsert let the second replace the first, even running).
func (s *Store) CreateSession(ctx context.Context, sess Session, created int64) error {
	doc, err := json.Marshal(sess)
	if err != nil {
		return fmt.Errorf("encode session %s: %w", sess.Name, err)
	}
	err = s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (name, created_at, doc) VALUES (?, ?, ?)`, sess.Name, created, string(doc))
		return err
	})
	if sqldb.IsUniqueViolation(err) {
		return problem.Conflictf("A session with the name %s already exists", sess.Name)
	}
	if err != nil {
		return fmt.Errorf("store session %s: %w", sess.Name, err)
	}
	return nil
}

// Session returns one session (ErrNotFound), with the version it was read at.
func (s *Store) Session(ctx context.Context, name string) (Session, error) {
	var sess Session
	var doc string
	err := s.db.R.QueryRowContext(ctx, `SELECT version, doc FROM sessions WHERE name = ?`, name).Scan(&sess.version, &doc)
	if errors.Is(err, sql.ErrNoRows) {
		return sess, problem.NotFoundf("Session %s could not be found", name)
	}
	if err != nil {
		return sess, fmt.Errorf("read session %s: %w", name, err)
	}
	if err := json.Unmarshal([]byte(doc), &sess); err != nil {
		return sess, fmt.Errorf("decode session %s: %w", name, err)
	}
	return sess, nil
}

// Sessions lists every session, oldest first.
func (s *Store) Sessions(ctx context.Context) ([]Session, error) {
	return listDocs(ctx, s, `SELECT version, doc FROM sessions ORDER BY created_at, name`,
		func(sess *Session) *int64 { return &sess.version })
}

// DeleteSession removes a session (ErrNotFound).
func (s *Store) DeleteSession(ctx context.Context, name string) error {
	return s.deleteRow(ctx, `DELETE FROM sessions WHERE name = ?`, "Session", name, name)
}

// SaveComponents writes the given components and deletes the deleted IDs,
// in one transaction. Each component is written only if the stored one is
// still at c.version (0: not stored yet), else nothing is written and the
// error is ErrConflict; on success each moves to version+1.
func (s *Store) SaveComponents(ctx context.Context, comps []Component, deleted []string) error {
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		for _, c := range comps {
			if err := saveComponent(ctx, tx, c); err != nil {
				return err
			}
		}
		for _, id := range deleted {
			if _, err := tx.ExecContext(ctx, `DELETE FROM components WHERE id = ?`, id); err != nil {
				return fmt.Errorf("delete component %s: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := range comps {
		comps[i].version++
	}
	return nil
}

func saveComponent(ctx context.Context, tx *sql.Tx, c Component) error {
	doc, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encode component %s: %w", c.ID, err)
	}
	var res sql.Result
	if c.version == 0 {
		res, err = tx.ExecContext(ctx, `INSERT INTO components (id, doc, version) VALUES (?, ?, 1)
			ON CONFLICT (id) DO NOTHING`, c.ID, string(doc))
	} else {
		res, err = tx.ExecContext(ctx, `UPDATE components SET doc = ?, version = version + 1 WHERE id = ? AND version = ?`,
			string(doc), c.ID, c.version)
	}
	if err != nil {
		return fmt.Errorf("store component %s: %w", c.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store component %s: %w", c.ID, err)
	} else if n == 0 {
		return problem.Conflictf("Component %s was changed meanwhile (not at version %d)", c.ID, c.version)
	}
	return nil
}

// Components loads every component.
func (s *Store) Components(ctx context.Context) ([]Component, error) {
	return listDocs(ctx, s, `SELECT version, doc FROM components ORDER BY id`,
		func(c *Component) *int64 { return &c.version })
}

// Options returns the stored options (nil when none were ever patched).
func (s *Store) Options(ctx context.Context) (map[string]any, error) {
	var o map[string]any
	err := s.getDoc(ctx, `SELECT doc FROM options WHERE id = ?`, &o, 1)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return o, err
}

// PutOptions replaces the stored options.
func (s *Store) PutOptions(ctx context.Context, o map[string]any) error {
	doc, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("encode options: %w", err)
	}
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO options (id, doc) VALUES (1, ?)
			ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`, string(doc))
		if err != nil {
			return fmt.Errorf("store options: %w", err)
		}
		return nil
	})
}

func (s *Store) getDoc(ctx context.Context, query string, v any, args ...any) error {
	key := args[len(args)-1]
	var doc string
	if err := s.db.R.QueryRowContext(ctx, query, args...).Scan(&doc); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return fmt.Errorf("read %v: %w", key, err)
	}
	if err := json.Unmarshal([]byte(doc), v); err != nil {
		return fmt.Errorf("decode %v: %w", key, err)
	}
	return nil
}

// deleteRow runs a DELETE of one row (query with args), named what key in
// errors.
func (s *Store) deleteRow(ctx context.Context, query, what, key string, args ...any) error {
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return fmt.Errorf("delete %s %s: %w", what, key, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return problem.NotFoundf("%s %s could not be found", what, key)
		}
		return nil
	})
}

// listDocs reads rows of (version, doc); version, when given, says where
// a row's version goes.
func listDocs[T any](ctx context.Context, s *Store, query string, version func(*T) *int64, args ...any) ([]T, error) {
	rows, err := s.db.R.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		var doc string
		var v int64
		if err := rows.Scan(&v, &doc); err != nil {
			return nil, fmt.Errorf("list: %w", err)
		}
		var item T
		if err := json.Unmarshal([]byte(doc), &item); err != nil {
			return nil, fmt.Errorf("list: decode: %w", err)
		}
		if version != nil {
			*version(&item) = v
		}
		out = append(out, item)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	return out, nil
}
