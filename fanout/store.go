package fanout

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/redact"
	"github.com/hmsuite/hms/internal/sqldb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Store keeps subscriptions, undelivered SCNs and the per-component intake
// sequence marks in SQLite or PostgreSQL.
type Store struct {
	db *sqldb.DB

	tmu     sync.Mutex
	targets map[string]int64 // subscriber URL -> targets.id; rows are never deleted
	urls    map[int64]string // and back

	// The queue in memory; see queue_store.go.
	lmu     sync.Mutex
	live    map[int64]*liveSCN // by SCN id
	cursors map[int64]int64    // target id -> targets.acked
	maxSCN  int64              // highest SCN id queued or covered by a cursor
}

// OpenStore opens (creating and migrating) the SQLite database at path, or
// the PostgreSQL database a postgres:// path names (sqldb.Open).
func OpenStore(ctx context.Context, path string) (*Store, error) {
	db, err := sqldb.OpenEmbedded(ctx, path, migrationFiles)
	if err != nil {
		return nil, fmt.Errorf("open hmnfd store: %w", err)
	}
	s := &Store{db: db, targets: map[string]int64{}, urls: map[int64]string{},
		live: map[int64]*liveSCN{}, cursors: map[int64]int64{}}
	if err := s.loadQueueState(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Kind names the database: "SQLite" or "PostgreSQL" (/health's KvStore).
func (s *Store) Kind() string { return s.db.Engine() }

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
	targets  []rng // whom it goes to (when queueing)
}

// qkey names one delivery: an SCN to one target (subscriber URL).
type qkey struct {
	target, scn int64
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

// insertSubscription stores a new subscription, and a target for its URL
// if it has none (so that its sender, created with it, knows its target id
// and the first SCN to it does not store targets); an existing key is a 400
// as in Subscribe.
func (s *Store) insertSubscription(ctx context.Context, k Key, sub Subscription, now time.Time) (int64, error) {
	var id int64
	var got map[string]int64
	missing := s.unknownTargets([]string{sub.Url})
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx,
			`INSERT INTO subscriptions (component, agent, url, body, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id`,
			k.Component, k.Agent, sub.Url, subBody(sub), now.UTC().Format(time.RFC3339Nano)).Scan(&id)
		if err == nil && len(missing) > 0 {
			got, err = s.insertTargets(ctx, tx, missing)
		}
		return err
	})
	if sqldb.IsUniqueViolation(err) {
		return 0, problem.Invalidf("Subscription exists, cannot modify in POST operation") // shipped wording and 400; see Subscribe
	}
	if err != nil {
		return 0, fmt.Errorf("store subscription %s: %w", k, err)
	}
	s.rememberTargets(got)
	return id, nil
}

// updateSubscription replaces subscription id (storing a target for its
// URL if it has none); if the URL changed and no other subscription uses the
// old one, dropOld names the backlog to drop.
func (s *Store) updateSubscription(ctx context.Context, id int64, sub Subscription, dropOld string) error {
	missing := s.unknownTargets([]string{sub.Url})
	var got map[string]int64
	s.lmu.Lock()
	drop := s.planDrop([]string{dropOld})
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE subscriptions SET url = ?, body = ? WHERE id = ?`, sub.Url, subBody(sub), id); err != nil {
			return err
		}
		if len(missing) > 0 {
			var err error
			if got, err = s.insertTargets(ctx, tx, missing); err != nil {
				return err
			}
		}
		return s.execDrop(ctx, tx, drop)
	})
	if err != nil {
		s.lmu.Unlock()
		return fmt.Errorf("update subscription %d: %w", id, err)
	}
	s.applyDrop(drop)
	s.lmu.Unlock()
	s.rememberTargets(got)
	return nil
}

// moveSubscription points subscription id at sub.Url and hands the backlog
// of its old URL, which nothing else uses, to the new one, which nothing
// else uses either; it returns how many deliveries moved. The old URL's
// target takes the new URL, so the queued SCNs that name it need no change;
// a target the new URL had (with nothing owed: nothing used it) takes the
// old URL, whose backlog is then dropped. Target ids are never reused.
func (s *Store) moveSubscription(ctx context.Context, id int64, sub Subscription, oldURL string) (int, error) {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	oldT, newT := s.target(oldURL), s.target(sub.Url)
	moved := 0
	for sid, l := range s.live {
		if oldT != 0 && s.owes(l, sid, oldT) {
			moved++
		}
	}
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE subscriptions SET url = ?, body = ? WHERE id = ?`, sub.Url, subBody(sub), id); err != nil {
			return err
		}
		if oldT == 0 {
			return nil
		}
		if newT != 0 { // out of the way of UNIQUE (url) first
			if _, err := tx.ExecContext(ctx, `UPDATE targets SET url = ?, acked = ? WHERE id = ?`,
				fmt.Sprintf("moving:%d", newT), s.maxSCN, newT); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE targets SET url = ? WHERE id = ?`, sub.Url, oldT); err != nil {
			return err
		}
		if newT != 0 {
			_, err := tx.ExecContext(ctx, `UPDATE targets SET url = ? WHERE id = ?`, oldURL, newT)
			return err
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("move subscription %d to %s: %w", id, redact.URL(sub.Url), err)
	}
	if oldT == 0 {
		return 0, nil
	}
	s.tmu.Lock()
	defer s.tmu.Unlock()
	s.targets[sub.Url], s.urls[oldT] = oldT, sub.Url
	delete(s.targets, oldURL)
	if newT != 0 {
		s.targets[oldURL], s.urls[newT] = newT, oldURL
		s.cursors[newT] = s.maxSCN
	}
	return moved, nil
}

// deleteSubscriptions removes subscriptions and the backlogs of the URLs
// that no subscription uses any more.
func (s *Store) deleteSubscriptions(ctx context.Context, ids []int64, orphanURLs []string) error {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	drop := s.planDrop(orphanURLs)
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `DELETE FROM subscriptions WHERE id = ?`, id); err != nil {
				return err
			}
		}
		return s.execDrop(ctx, tx, drop)
	})
	if err != nil {
		return fmt.Errorf("delete subscriptions: %w", err)
	}
	s.applyDrop(drop)
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
	missing := s.unknownTargets(urls)
	if len(missing) == 0 {
		for i, u := range urls {
			ids[i] = s.target(u)
		}
		return ids, nil
	}
	var got map[string]int64
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		var err error
		got, err = s.insertTargets(ctx, tx, missing)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store %d delivery targets: %w", len(missing), err)
	}
	s.rememberTargets(got)
	for i, u := range urls {
		ids[i] = s.target(u)
	}
	return ids, nil
}

// unknownTargets returns those of urls that have no target id yet, each once.
func (s *Store) unknownTargets(urls []string) []string {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	var out []string
	for _, u := range urls {
		if s.targets[u] == 0 {
			out = append(out, u)
		}
	}
	return sortUniq(out)
}

// insertTargets stores targets for urls in tx (an existing one is kept)
// and returns their ids, for rememberTargets once tx has committed.
func (s *Store) insertTargets(ctx context.Context, tx *sql.Tx, urls []string) (map[string]int64, error) {
	got := make(map[string]int64, len(urls))
	args := make([]any, len(urls))
	for i, u := range urls {
		args[i] = u
	}
	err := sqldb.Chunks(len(args), maxChunk, func(lo, hi int) error {
		rows, err := tx.QueryContext(ctx, `INSERT INTO targets (url) VALUES `+sqldb.Placeholders(hi-lo, 1)+`
				ON CONFLICT (url) DO UPDATE SET url = excluded.url RETURNING id, url`, args[lo:hi]...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var u string
			if err := rows.Scan(&id, &u); err != nil {
				return err
			}
			got[u] = id
		}
		return rows.Err()
	})
	return got, err
}

// rememberTargets records committed targets (from insertTargets) in memory.
func (s *Store) rememberTargets(got map[string]int64) {
	if len(got) == 0 {
		return
	}
	s.lmu.Lock()
	for _, id := range got {
		if _, ok := s.cursors[id]; !ok {
			s.cursors[id] = 0
		}
	}
	s.lmu.Unlock()
	s.tmu.Lock()
	defer s.tmu.Unlock()
	for u, id := range got {
		s.targets[u], s.urls[id] = id, u
	}
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
