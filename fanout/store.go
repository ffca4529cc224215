package fanout

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/sqldb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Store keeps subscriptions, undelivered SCNs and the per-component intake
// sequence marks in SQLite.
type Store struct {
	db *sqldb.DB
}

// OpenStore opens (creating and migrating) the database at path.
func OpenStore(ctx context.Context, path string) (*Store, error) {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("open hmnfd store: %w", err)
	}
	db, err := sqldb.Open(ctx, path, sub)
	if err != nil {
		return nil, fmt.Errorf("open hmnfd store: %w", err)
	}
	return &Store{db: db}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping checks the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

// storedSub is one subscription row.
type storedSub struct {
	id  int64
	key Key
	sub Subscription
}

// queueRow is one undelivered SCN for one URL.
type queueRow struct {
	id       int64
	url      string
	payload  []byte
	enqueued int64 // unix nanoseconds
}

// seqMark is the newest SCN seen for a component.
type seqMark struct {
	seq int64
	ts  int64
}

func (s *Store) subscriptions(ctx context.Context) ([]storedSub, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT id, component, agent, body FROM subscriptions ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("load subscriptions: %w", err)
	}
	defer rows.Close()
	var out []storedSub
	for rows.Next() {
		var ss storedSub
		var body string
		if err := rows.Scan(&ss.id, &ss.key.Component, &ss.key.Agent, &body); err != nil {
			return nil, fmt.Errorf("load subscriptions: %w", err)
		}
		if err := json.Unmarshal([]byte(body), &ss.sub); err != nil {
			return nil, fmt.Errorf("load subscription %d: %w", ss.id, err)
		}
		out = append(out, ss)
	}
	return out, rows.Err()
}

func subBody(sub Subscription) string {
	sub.Subscriber, sub.SubscriberComponent, sub.SubscriberAgent = "", "", ""
	b, _ := json.Marshal(sub) // a Subscription always marshals
	return string(b)
}

// insertSubscription stores a new subscription; an existing key is ErrConflict.
func (s *Store) insertSubscription(ctx context.Context, k Key, sub Subscription, now time.Time) (int64, error) {
	var id int64
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx,
			`INSERT INTO subscriptions (component, agent, url, body, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id`,
			k.Component, k.Agent, sub.Url, subBody(sub), now.UTC().Format(time.RFC3339Nano)).Scan(&id)
	})
	if sqldb.IsUniqueViolation(err) {
		return 0, problem.Conflictf("subscription for %s already exists; PATCH it or DELETE it first", k)
	}
	if err != nil {
		return 0, fmt.Errorf("store subscription %s: %w", k, err)
	}
	return id, nil
}

// updateSubscription replaces subscription id; if the URL changed and no
// other subscription uses the old one, dropOld names the backlog to delete.
func (s *Store) updateSubscription(ctx context.Context, id int64, sub Subscription, dropOld string) error {
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE subscriptions SET url = ?, body = ? WHERE id = ?`, sub.Url, subBody(sub), id); err != nil {
			return err
		}
		return dropQueues(ctx, tx, []string{dropOld})
	})
	if err != nil {
		return fmt.Errorf("update subscription %d: %w", id, err)
	}
	return nil
}

// deleteSubscriptions removes subscriptions and the backlogs of the URLs
// that no subscription uses any more.
func (s *Store) deleteSubscriptions(ctx context.Context, ids []int64, orphanURLs []string) error {
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `DELETE FROM subscriptions WHERE id = ?`, id); err != nil {
				return err
			}
		}
		return dropQueues(ctx, tx, orphanURLs)
	})
	if err != nil {
		return fmt.Errorf("delete subscriptions: %w", err)
	}
	return nil
}

func dropQueues(ctx context.Context, tx *sql.Tx, urls []string) error {
	for _, u := range urls {
		if u == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM queue WHERE url = ?`, u); err != nil {
			return err
		}
	}
	return nil
}

const insertChunk = 200

// enqueue stores queue rows and sequence marks in one transaction; when it
// returns nil the SCNs are durable.
func (s *Store) enqueue(ctx context.Context, rows []queueRow, marks map[string]seqMark) error {
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		for start := 0; start < len(rows); start += insertChunk {
			chunk := rows[start:min(start+insertChunk, len(rows))]
			q := `INSERT INTO queue (id, url, payload, enqueued_at) VALUES ` + placeholders(len(chunk), 4)
			args := make([]any, 0, 4*len(chunk))
			for _, r := range chunk {
				args = append(args, r.id, r.url, r.payload, r.enqueued)
			}
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return err
			}
		}
		for comp, m := range marks {
			_, err := tx.ExecContext(ctx, `INSERT INTO intake_seq (component, seq, ts) VALUES (?, ?, ?)
				ON CONFLICT (component) DO UPDATE SET seq = excluded.seq, ts = excluded.ts`, comp, m.seq, m.ts)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("queue %d deliveries: %w", len(rows), err)
	}
	return nil
}

func placeholders(rows, cols int) string {
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(one+", ", rows), ", ")
}

// ack deletes delivered rows.
func (s *Store) ack(ctx context.Context, ids []int64) error {
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		for start := 0; start < len(ids); start += 500 {
			chunk := ids[start:min(start+500, len(ids))]
			args := make([]any, len(chunk))
			for i, id := range chunk {
				args[i] = id
			}
			q := `DELETE FROM queue WHERE id IN (` + strings.TrimSuffix(strings.Repeat("?, ", len(chunk)), ", ") + `)`
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete %d delivered SCNs: %w", len(ids), err)
	}
	return nil
}

// loadQueue reads up to limit rows of url's backlog after id.
func (s *Store) loadQueue(ctx context.Context, url string, after int64, limit int) ([]queueRow, error) {
	rows, err := s.db.R.QueryContext(ctx,
		`SELECT id, payload, enqueued_at FROM queue WHERE url = ? AND id > ? ORDER BY id LIMIT ?`, url, after, limit)
	if err != nil {
		return nil, fmt.Errorf("load backlog of %s: %w", url, err)
	}
	defer rows.Close()
	var out []queueRow
	for rows.Next() {
		r := queueRow{url: url}
		if err := rows.Scan(&r.id, &r.payload, &r.enqueued); err != nil {
			return nil, fmt.Errorf("load backlog of %s: %w", url, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// backlogs reports the undelivered count per URL and the highest queue id.
func (s *Store) backlogs(ctx context.Context) (map[string]int, int64, error) {
	out := map[string]int{}
	rows, err := s.db.R.QueryContext(ctx, `SELECT url, COUNT(*) FROM queue GROUP BY url`)
	if err != nil {
		return nil, 0, fmt.Errorf("count backlogs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var u string
		var n int
		if err := rows.Scan(&u, &n); err != nil {
			return nil, 0, fmt.Errorf("count backlogs: %w", err)
		}
		out[u] = n
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("count backlogs: %w", err)
	}
	var maxID sql.NullInt64
	if err := s.db.R.QueryRowContext(ctx, `SELECT MAX(id) FROM queue`).Scan(&maxID); err != nil {
		return nil, 0, fmt.Errorf("max queue id: %w", err)
	}
	return out, maxID.Int64, nil
}

// seqMarks loads the intake sequence marks.
func (s *Store) seqMarks(ctx context.Context) (map[string]seqMark, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT component, seq, ts FROM intake_seq`)
	if err != nil {
		return nil, fmt.Errorf("load sequence marks: %w", err)
	}
	defer rows.Close()
	out := map[string]seqMark{}
	for rows.Next() {
		var c string
		var m seqMark
		if err := rows.Scan(&c, &m.seq, &m.ts); err != nil {
			return nil, fmt.Errorf("load sequence marks: %w", err)
		}
		out[c] = m
	}
	return out, rows.Err()
}
