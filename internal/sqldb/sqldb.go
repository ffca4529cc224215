// Package sqldb opens the SQLite databases the daemons keep their state in: WAL
// mode, foreign keys on, a busy timeout, one writer connection (SQLite allows one
// writer at a time; serialising in the pool is cheaper than lock retries) and a pool
// of read-only connections, with numbered migrations applied on open.
//
// Given a postgres:// URL instead of a file, Open opens that PostgreSQL
// database with the same two pools (pgx's database/sql driver), rebinding
// the "?" placeholders to $1, $2, ..., sending Go bools as 0/1 and
// translating the migrations' SQLite DDL (postgres.go, rebind.go).
//
// SQL written against this package stays portable to PostgreSQL: standard
// types (INTEGER, BIGINT, TEXT, REAL), "?" placeholders outside quoted
// literals, ON CONFLICT upserts, RETURNING instead of LastInsertId, times
// computed in Go, no SQLite-only functions. docs/sql-portability.md lists
// what is still SQLite-only and what each maps to; TestSQLPortable keeps
// the list closed, and TestEveryMigrationOnPostgres runs every daemon's
// migrations on PostgreSQL.
package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hmsuite/hms/internal/pause"
	"modernc.org/sqlite"
)

// DB is a SQLite database with a single-connection writer pool and a reader
// pool; or a PostgreSQL one, with the same pools, when Open is given a URL.
type DB struct {
	// W is the writer pool (one connection). Use WriteTx for transactions.
	W *sql.DB
	// R is the read-only pool for queries.
	R *sql.DB
	// Path is the file the database lives in (or the PostgreSQL URL).
	Path string

	lock *os.File // holds the flock on Path+".lock" until Close

	pg bool // a PostgreSQL database (openPostgres)

	stmts  sync.Map // query -> *sql.Stmt prepared on W
	rstmts sync.Map // query -> *sql.Stmt prepared on R (Query)
	ck     *sql.DB  // one connection for background checkpoints

	mu        sync.Mutex
	pending   map[string]bool // queries to prepare on W after the current transaction
	closed    bool
	ckRunning bool
	ckLast    time.Time
	ckWG      sync.WaitGroup

	prepMu  sync.Mutex // serialises preparePending and Query's preparing
	nstmts  int        // statements in stmts, under prepMu
	nrstmts int        // statements in rstmts, under prepMu

	txs *Group[*txJob] // the transactions of GroupTx

	commits atomic.Uint64 // write transactions committed (Commits)
}

// OpenEmbedded is Open with the migrations in the directory "migrations"
// of files: what a service's store embeds with
// `//go:embed migrations/*.sql`.
func OpenEmbedded(ctx context.Context, p string, files fs.FS) (*DB, error) {
	migrations, err := fs.Sub(files, "migrations")
	if err != nil {
		return nil, fmt.Errorf("open database: migrations: %w", err)
	}
	return Open(ctx, p, migrations)
}

// Open opens (creating if needed) the SQLite file at p and applies the
// migrations found in migrations (files named NNNN_description.sql, applied in
// numeric order, each once). migrations may be nil. The database is locked for
// this process until Close: an Open of the same file from another process
// fails with ErrLocked.
//
// A p that is a postgres:// or postgresql:// URL opens that PostgreSQL
// database instead (openPostgres): the same SQL runs there, rebound, and
// the migrations are translated (translateDDL) or replaced by their
// NNNN_description.postgres.sql twin where one exists.
func Open(ctx context.Context, p string, migrations fs.FS) (*DB, error) {
	if p == "" {
		return nil, errors.New("open database: empty path")
	}
	if IsPostgres(p) {
		return openPostgres(ctx, p, migrations)
	}
	lock, err := lockFile(p)
	if err != nil {
		return nil, err
	}
	db, err := openUnlocked(ctx, p, migrations)
	if err != nil {
		lock.Close()
		return nil, err
	}
	db.lock = lock
	return db, nil
}

// openUnlocked is Open without the lock; tests use it to stand in for
// another process (a backup, the sqlite3 shell) writing the same file.
func openUnlocked(ctx context.Context, p string, migrations fs.FS) (*DB, error) {
	q := url.Values{}
	// The writer keeps a large page cache (64 MiB): it is the only connection
	// that changes pages, so its cache stays valid between transactions and
	// random updates over a big table do not re-read pages from the file.
	// Checkpoints run beside the writer (see checkpointSoon); the writer's own
	// automatic checkpoint only backs that up, at 64 MiB of WAL.
	// synchronous FULL: a commit is on disk before it returns, so what a
	// daemon acknowledged (an HTTP 2xx, a Kafka offset committed after an
	// SCN was queued, an outbox row published) survives a power loss, not
	// only a crash of the process. Group commits keep the fsyncs few.
	for _, pr := range []string{"journal_mode(WAL)", "busy_timeout(10000)", "foreign_keys(1)", "synchronous(FULL)",
		"cache_size(-65536)", "wal_autocheckpoint(16384)"} {
		q.Add("_pragma", pr)
	}
	q.Set("_txlock", "immediate")
	w, err := sql.Open("sqlite", "file:"+p+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", p, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open database %s: %w", p, err)
	}
	db := &DB{W: w, Path: p}
	db.txs = NewGroup(txRound, db.commitTxs)
	if migrations != nil {
		if err := db.migrate(ctx, migrations); err != nil {
			w.Close()
			return nil, err
		}
	}
	rq := url.Values{}
	for _, pr := range []string{"busy_timeout(10000)", "foreign_keys(1)", "query_only(1)"} {
		rq.Add("_pragma", pr)
	}
	r, err := sql.Open("sqlite", "file:"+p+"?"+rq.Encode())
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open database %s: %w", p, err)
	}
	n := max(4, runtime.GOMAXPROCS(0)*2)
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	db.R = r
	cq := url.Values{}
	cq.Add("_pragma", "busy_timeout(10000)")
	ck, err := sql.Open("sqlite", "file:"+p+"?"+cq.Encode())
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", p, err)
	}
	ck.SetMaxOpenConns(1)
	ck.SetMaxIdleConns(1)
	db.ck = ck
	return db, nil
}

// CheckpointEvery is the least time between two background checkpoints.
const CheckpointEvery = 250 * time.Millisecond

// checkpointSoon starts a PASSIVE checkpoint on the checkpoint connection,
// unless one is running or the last started less than CheckpointEvery ago.
// A checkpoint copies WAL pages into the database file while the writer
// goes on; run by the writer at commit (SQLite's default) it would stall
// every write behind it, and on a busy database that is most of the cost of
// a commit.
func (db *DB) checkpointSoon() {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.ck == nil || db.ckRunning || db.closed || time.Since(db.ckLast) < CheckpointEvery {
		return
	}
	db.ckRunning, db.ckLast = true, time.Now()
	db.ckWG.Add(1)
	go func() {
		defer db.ckWG.Done()
		_ = db.Checkpoint(context.Background())
		db.mu.Lock()
		db.ckRunning = false
		db.mu.Unlock()
	}()
}

// Checkpoint copies what it can of the WAL into the database file without
// waiting for readers or the writer (a PASSIVE checkpoint).
func (db *DB) Checkpoint(ctx context.Context) error {
	if db.ck == nil {
		return nil // PostgreSQL: the server checkpoints
	}
	if _, err := db.ck.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
		return fmt.Errorf("checkpoint %s: %w", Display(db.Path), err)
	}
	return nil
}

// Close waits for a running checkpoint and closes the pools.
func (db *DB) Close() error {
	db.mu.Lock()
	db.closed = true
	db.mu.Unlock()
	db.ckWG.Wait()
	db.stmts.Range(func(_, v any) bool { v.(*sql.Stmt).Close(); return true })
	db.rstmts.Range(func(_, v any) bool { v.(*sql.Stmt).Close(); return true })
	err := errors.Join(db.R.Close(), db.closeWriter())
	if db.ck != nil {
		err = errors.Join(err, db.ck.Close())
	}
	if db.lock != nil {
		err = errors.Join(err, db.lock.Close()) // releases the flock
	}
	return err
}

// Stmt returns query as a statement of tx, a transaction run by WriteTx. The
// first use prepares it for tx only and, once the transaction ends, once more
// on the writer connection; later transactions reuse that, so hot write
// paths do not parse their SQL each time. (The writer pool has a single
// connection, held by tx, so it cannot be prepared on the pool meanwhile.)
func (db *DB) Stmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	if v, ok := db.stmts.Load(query); ok {
		return tx.StmtContext(ctx, v.(*sql.Stmt)), nil
	}
	st, err := tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	db.mu.Lock()
	if db.pending == nil {
		db.pending = map[string]bool{}
	}
	db.pending[query] = true
	db.mu.Unlock()
	return st, nil
}

// MaxCachedStmts bounds the statements kept prepared on the writer; past it,
// a statement new to Stmt is prepared for its transaction only.
const MaxCachedStmts = 256

// preparePending prepares on the writer pool the statements Stmt met for
// the first time. Called with no transaction open.
func (db *DB) preparePending(ctx context.Context) {
	db.mu.Lock()
	pending := db.pending
	db.pending = nil
	db.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	db.prepMu.Lock()
	defer db.prepMu.Unlock()
	for q := range pending {
		if _, ok := db.stmts.Load(q); ok {
			continue
		}
		if db.nstmts >= MaxCachedStmts {
			return // generated SQL (multi-row VALUES lists) must not grow the cache without end
		}
		if st, err := db.W.PrepareContext(ctx, q); err == nil {
			db.stmts.Store(q, st)
			db.nstmts++
		}
	}
}

// Query runs query on the reader pool with a statement prepared once and
// kept (each reader connection parses it on first use only), so a hot read
// path does not parse its SQL per request. Past MaxCachedStmts distinct
// queries, a new one is run unprepared.
func (db *DB) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := db.readStmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return db.R.QueryContext(ctx, query, args...)
	}
	return st.QueryContext(ctx, args...)
}

func (db *DB) readStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if v, ok := db.rstmts.Load(query); ok {
		return v.(*sql.Stmt), nil
	}
	db.prepMu.Lock()
	defer db.prepMu.Unlock()
	if v, ok := db.rstmts.Load(query); ok {
		return v.(*sql.Stmt), nil
	}
	if db.nrstmts >= MaxCachedStmts {
		return nil, nil
	}
	st, err := db.R.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	db.rstmts.Store(query, st)
	db.nrstmts++
	return st, nil
}

// Ping checks the database answers; daemons use it for readiness.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.R.PingContext(ctx); err != nil {
		return fmt.Errorf("database %s: %w", Display(db.Path), err) // shown by open health routes: no password
	}
	return nil
}

// WriteTx runs fn in a write transaction and commits it if fn returns nil. If
// SQLite reports the database busy or locked (another process holds the write
// lock past the busy timeout), the whole transaction is retried with backoff, so
// fn must be safe to run again.
func (db *DB) WriteTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	backoff := 5 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := db.writeOnce(ctx, fn)
		if err == nil || !IsBusy(err) || attempt >= 20 {
			return err
		}
		if !pause.For(ctx, backoff) {
			return ctx.Err()
		}
		backoff = min(backoff*2, time.Second)
	}
}

func (db *DB) writeOnce(ctx context.Context, fn func(tx *sql.Tx) error) error {
	defer db.preparePending(context.WithoutCancel(ctx))
	tx, err := db.W.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	db.commits.Add(1)
	db.checkpointSoon()
	return nil
}

// Commits is the number of write transactions committed since Open: how
// well writes share their commits (group commit), for tests and metrics.
func (db *DB) Commits() uint64 { return db.commits.Load() }

// IsBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED, or
// PostgreSQL's serialization failure or deadlock: the transaction may be
// run again.
func IsBusy(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		code := se.Code() & 0xff
		return code == 5 || code == 6
	}
	return pgBusy(err)
}

// IsUniqueViolation reports whether err is a UNIQUE or PRIMARY KEY constraint failure.
func IsUniqueViolation(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == 2067 || se.Code() == 1555 // SQLITE_CONSTRAINT_UNIQUE, _PRIMARYKEY
	}
	return pgUnique(err)
}

// Migrate applies another set of migrations to an open database: a
// subsystem that keeps its tables in its daemon's file (the DHCP server's
// leases in bss's) owns its migrations. Versions share one numbering with
// the daemon's own, so such a set takes a range of its own (1001...).
func (db *DB) Migrate(ctx context.Context, migrations fs.FS) error {
	return db.migrate(ctx, migrations)
}

type migration struct {
	version int
	name    string // recorded in schema_migrations
	file    string // read: name, or its PostgreSQL twin
	native  bool   // file is the twin: run as written
}

// pgSuffix names a migration's PostgreSQL twin: NNNN_name.postgres.sql runs
// on PostgreSQL instead of NNNN_name.sql, which SQLite runs and PostgreSQL
// gets translated (translateDDL). A twin is for what translation cannot
// do (SQLite's JSON functions fixing up stored rows).
const pgSuffix = ".postgres.sql"

// migrations lists the migrations of fsys for db's dialect, in order.
func (db *DB) migrations(fsys fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	byVersion := map[int]int{} // version -> index in ms
	var ms []migration
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".sql" {
			continue
		}
		twin := strings.HasSuffix(e.Name(), pgSuffix)
		if twin && !db.pg {
			continue
		}
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must be NNNN_description.sql", e.Name())
		}
		m := migration{version: v, name: e.Name(), file: e.Name(), native: twin}
		if twin {
			m.name = strings.TrimSuffix(e.Name(), pgSuffix) + ".sql"
		}
		if i, dup := byVersion[v]; dup {
			// Only a file and its PostgreSQL twin share a version: two
			// migrations of one number (two people adding NNNN at once)
			// would have one of them never run, silently.
			if ms[i].name != m.name {
				return nil, fmt.Errorf("migrations %s and %s share version %d: renumber one", ms[i].file, e.Name(), v)
			}
			if twin { // the twin replaces the file it is named after
				ms[i].file, ms[i].native = m.file, true
			}
			continue
		}
		byVersion[v] = len(ms)
		ms = append(ms, m)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

func (db *DB) migrate(ctx context.Context, fsys fs.FS) error {
	ms, err := db.migrations(fsys)
	if err != nil {
		return err
	}
	if _, err := db.W.ExecContext(ctx, db.ddl(false, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`)); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	for _, m := range ms {
		body, err := fs.ReadFile(fsys, m.file)
		if err != nil {
			return fmt.Errorf("read migration %s: %w", m.file, err)
		}
		err = db.WriteTx(ctx, func(tx *sql.Tx) error {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, m.version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, db.ddl(m.native, string(body))); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.version, m.name, time.Now().UTC().Format(time.RFC3339))
			return err
		})
		if err != nil {
			return fmt.Errorf("apply migration %s: %w", m.file, err)
		}
	}
	return nil
}

// ddl is a migration as db runs it: translated for PostgreSQL unless it is
// written for it (native).
func (db *DB) ddl(native bool, q string) string {
	if !db.pg || native {
		return q
	}
	return translateDDL(q)
}
