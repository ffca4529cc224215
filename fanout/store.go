package fanout

import (
	"cmp"
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"sync"
	"time"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/redact"
	"github.com/hmsuite/hms/internal/sqldb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Store keeps subscriptions, undelivered SCNs and the per-component intake
// sequence marks in SQLite.
type Store struct {
	db *sqldb.DB

	tmu     sync.Mutex
	targets map[string]int64 // subscriber URL -> targets.id; rows are never deleted
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
	s := &Store{db: db, targets: map[string]int64{}}
	rows, err := db.R.QueryContext(ctx, `SELECT id, url FROM targets`)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("load delivery targets: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var u string
		if err := rows.Scan(&id, &u); err != nil {
			db.Close()
			return nil, fmt.Errorf("load delivery targets: %w", err)
		}
		s.targets[u] = id
	}
	if err := rows.Err(); err != nil {
		db.Close()
		return nil, fmt.Errorf("load delivery targets: %w", err)
	}
	return s, nil
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

// scnRow is one SCN body as POSTed, stored once for all its subscribers.
type scnRow struct {
	id       int64
	body     []byte
	enqueued int64 // unix nanoseconds
}

// qkey names one undelivered SCN of one target (subscriber URL).
type qkey struct {
	target, scn int64
}

func (k qkey) compare(o qkey) int {
	return cmp.Or(cmp.Compare(k.target, o.target), cmp.Compare(k.scn, o.scn))
}

// seqMark is the newest SCN seen for a component.
type seqMark struct {
	epoch int64 // HSM database epoch; 0 for SCNs that carry none
	seq   int64
	ts    int64
}

// newer reports whether an SCN with epoch, seq and Timestamp ts (unix ns)
// comes after m. With epochs on both sides, (epoch, seq) order them, so a
// clock step on HSM's host changes nothing and SCNs of a database replaced
// since are stale. Without (an HSM that sends none, marks stored before
// epochs existed), a higher Seq or a newer Timestamp counts as newer.
func (m seqMark) newer(epoch, seq, ts int64) bool {
	if epoch != 0 && m.epoch != 0 {
		if epoch != m.epoch {
			return epoch > m.epoch
		}
		return seq > m.seq
	}
	return seq > m.seq || ts > m.ts
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

// insertSubscription stores a new subscription; an existing key is a 400 as in Subscribe.
func (s *Store) insertSubscription(ctx context.Context, k Key, sub Subscription, now time.Time) (int64, error) {
	var id int64
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx,
			`INSERT INTO subscriptions (component, agent, url, body, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id`,
			k.Component, k.Agent, sub.Url, subBody(sub), now.UTC().Format(time.RFC3339Nano)).Scan(&id)
	})
	if sqldb.IsUniqueViolation(err) {
		return 0, problem.Invalidf("Subscription exists, cannot modify in POST operation") // shipped wording and 400; see Subscribe
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
		return s.dropQueues(ctx, tx, []string{dropOld})
	})
	if err != nil {
		return fmt.Errorf("update subscription %d: %w", id, err)
	}
	return nil
}

// moveSubscription points subscription id at sub.Url and hands the backlog
// of its old URL, which nothing else uses, to the new one, which nothing
// else uses either; it returns how many deliveries moved.
func (s *Store) moveSubscription(ctx context.Context, id int64, sub Subscription, oldURL string) (int, error) {
	ids, err := s.targetIDs(ctx, []string{sub.Url})
	if err != nil {
		return 0, err
	}
	moved := 0
	err = s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE subscriptions SET url = ?, body = ? WHERE id = ?`, sub.Url, subBody(sub), id); err != nil {
			return err
		}
		old := s.target(oldURL)
		if old == 0 {
			return nil
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO deliveries (target, scn) SELECT ?, scn FROM deliveries WHERE target = ?`, ids[0], old)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		moved = int(n)
		_, err = tx.ExecContext(ctx, `DELETE FROM deliveries WHERE target = ?`, old)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("move subscription %d to %s: %w", id, redact.URL(sub.Url), err)
	}
	return moved, nil
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
		return s.dropQueues(ctx, tx, orphanURLs)
	})
	if err != nil {
		return fmt.Errorf("delete subscriptions: %w", err)
	}
	return nil
}

// dropQueues deletes the backlogs of urls and the SCN bodies nobody else is owed.
func (s *Store) dropQueues(ctx context.Context, tx *sql.Tx, urls []string) error {
	for _, u := range urls {
		t := s.target(u)
		if t == 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM scns WHERE id IN (SELECT scn FROM deliveries WHERE target = ?)
			AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.scn = scns.id AND d.target <> ?)`, t, t); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM deliveries WHERE target = ?`, t); err != nil {
			return err
		}
	}
	return nil
}

// target is url's target id, 0 if it has none yet.
func (s *Store) target(url string) int64 {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	return s.targets[url]
}

// targetIDs returns the target id of each of urls, storing the new ones.
func (s *Store) targetIDs(ctx context.Context, urls []string) ([]int64, error) {
	ids := make([]int64, len(urls))
	var missing []int
	s.tmu.Lock()
	for i, u := range urls {
		if ids[i] = s.targets[u]; ids[i] == 0 {
			missing = append(missing, i)
		}
	}
	s.tmu.Unlock()
	if len(missing) == 0 {
		return ids, nil
	}
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		st, err := s.db.Stmt(ctx, tx, `INSERT INTO targets (url) VALUES (?)
			ON CONFLICT (url) DO UPDATE SET url = excluded.url RETURNING id`)
		if err != nil {
			return err
		}
		rowCtx := context.WithoutCancel(ctx) // see ack
		for _, i := range missing {
			if err := st.QueryRowContext(rowCtx, urls[i]).Scan(&ids[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store %d delivery targets: %w", len(missing), err)
	}
	s.tmu.Lock()
	for _, i := range missing {
		s.targets[urls[i]] = ids[i]
	}
	s.tmu.Unlock()
	return ids, nil
}

// enqueue stores SCN bodies, deliveries and sequence marks in one
// transaction; when it returns nil the SCNs are durable. begun, if not nil,
// is called once, as soon as the transaction holds the database's only
// writer connection (see Service.Enqueue).
func (s *Store) enqueue(ctx context.Context, bodies []scnRow, rows []qkey, marks map[string]seqMark, begun func()) error {
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		if begun != nil {
			begun()
			begun = nil // WriteTx may run the transaction again
		}
		args := make([]any, 0, 3*maxChunk)
		err := sqldb.Chunks(len(bodies), maxChunk, func(lo, hi int) error {
			args = args[:0]
			for _, b := range bodies[lo:hi] {
				args = append(args, b.id, b.body, b.enqueued)
			}
			return s.exec(ctx, tx, `INSERT INTO scns (id, body, enqueued_at) VALUES `+sqldb.Placeholders(hi-lo, 3), args)
		})
		if err != nil {
			return err
		}
		err = sqldb.Chunks(len(rows), maxChunk, func(lo, hi int) error {
			args = args[:0]
			for _, r := range rows[lo:hi] {
				args = append(args, r.target, r.scn)
			}
			return s.exec(ctx, tx, `INSERT INTO deliveries (target, scn) VALUES `+sqldb.Placeholders(hi-lo, 2), args)
		})
		if err != nil {
			return err
		}
		for comp, m := range marks {
			err := s.exec(ctx, tx, `INSERT INTO intake_seq (component, seq, ts, epoch) VALUES (?, ?, ?, ?)
				ON CONFLICT (component) DO UPDATE SET seq = excluded.seq, ts = excluded.ts, epoch = excluded.epoch`,
				[]any{comp, m.seq, m.ts, m.epoch})
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

// exec runs query in tx as a prepared statement kept for the next transaction.
func (s *Store) exec(ctx context.Context, tx *sql.Tx, query string, args []any) error {
	st, err := s.db.Stmt(ctx, tx, query)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(ctx, args...)
	return err
}

// maxChunk is the most rows one multi-row statement carries.
const maxChunk = 256

// ack deletes delivered rows, and the SCN bodies nobody is owed any more.
func (s *Store) ack(ctx context.Context, keys []qkey) error {
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		del, err := s.db.Stmt(ctx, tx, `DELETE FROM deliveries WHERE target = ? AND scn = ?`)
		if err != nil {
			return err
		}
		gc, err := s.db.Stmt(ctx, tx, `DELETE FROM scns WHERE id = ? AND NOT EXISTS (SELECT 1 FROM deliveries WHERE scn = ?)`)
		if err != nil {
			return err
		}
		slices.SortFunc(keys, qkey.compare) // visit the B-tree pages in order
		// modernc.org/sqlite starts a goroutine per statement to watch a
		// cancellable context; for thousands of one-row deletes that was the
		// largest allocation of a fan-out. The transaction keeps ctx.
		rowCtx := context.WithoutCancel(ctx)
		seen := map[int64]bool{}
		for _, k := range keys {
			if _, err := del.ExecContext(rowCtx, k.target, k.scn); err != nil {
				return err
			}
			seen[k.scn] = true
		}
		for id := range seen {
			if _, err := gc.ExecContext(rowCtx, id, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete %d delivered SCNs: %w", len(keys), err)
	}
	return nil
}

// loadQueue reads up to limit SCNs of target's backlog after SCN id after.
func (s *Store) loadQueue(ctx context.Context, target, after int64, limit int) ([]scnRow, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT s.id, s.body, s.enqueued_at FROM deliveries d JOIN scns s ON s.id = d.scn
		WHERE d.target = ? AND d.scn > ? ORDER BY d.scn LIMIT ?`, target, after, limit)
	if err != nil {
		return nil, fmt.Errorf("load backlog of target %d: %w", target, err)
	}
	defer rows.Close()
	var out []scnRow
	for rows.Next() {
		var r scnRow
		if err := rows.Scan(&r.id, &r.body, &r.enqueued); err != nil {
			return nil, fmt.Errorf("load backlog of target %d: %w", target, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// backlogs reports the undelivered count per URL and the highest SCN id.
func (s *Store) backlogs(ctx context.Context) (map[string]int, int64, error) {
	out := map[string]int{}
	rows, err := s.db.R.QueryContext(ctx, `SELECT t.url, COUNT(*) FROM deliveries d JOIN targets t ON t.id = d.target GROUP BY t.url`)
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
	if err := s.db.R.QueryRowContext(ctx, `SELECT MAX(id) FROM scns`).Scan(&maxID); err != nil {
		return nil, 0, fmt.Errorf("max SCN id: %w", err)
	}
	return out, maxID.Int64, nil
}

// seqMarks loads the intake sequence marks.
func (s *Store) seqMarks(ctx context.Context) (map[string]seqMark, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT component, seq, ts, epoch FROM intake_seq`)
	if err != nil {
		return nil, fmt.Errorf("load sequence marks: %w", err)
	}
	defer rows.Close()
	out := map[string]seqMark{}
	for rows.Next() {
		var c string
		var m seqMark
		if err := rows.Scan(&c, &m.seq, &m.ts, &m.epoch); err != nil {
			return nil, fmt.Errorf("load sequence marks: %w", err)
		}
		out[c] = m
	}
	return out, rows.Err()
}
