package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// IsPostgres reports whether p names a PostgreSQL database (a postgres://
// or postgresql:// URL) rather than a SQLite file.
func IsPostgres(p string) bool {
	return strings.HasPrefix(p, "postgres://") || strings.HasPrefix(p, "postgresql://")
}

// Engine names the database d is on: "SQLite" or "PostgreSQL" (what the
// daemons' health answers show).
func (d *DB) Engine() string {
	if d.pg {
		return "PostgreSQL"
	}
	return "SQLite"
}

// Display is p as it may be logged: a PostgreSQL URL without its password.
func Display(p string) string {
	if !IsPostgres(p) {
		return p
	}
	u, err := url.Parse(p)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	// pgx takes ?password= too, and ?sslpassword= (the client key's
	// passphrase): both are masked, as pgx's own errors mask them.
	q, masked := u.Query(), false
	for _, k := range []string{"password", "sslpassword"} {
		if q.Has(k) {
			q.Set(k, "xxxxx")
			masked = true
		}
	}
	if masked {
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// advisoryLock is the pg_try_advisory_lock key a daemon holds on its
// database while it runs: each daemon has a database of its own (their
// table names and schema_migrations would collide), so one key serves all.
const advisoryLock = 0x686d73 // "hms"

// openPostgres is Open for a PostgreSQL URL, with pgx's database/sql driver
// (github.com/jackc/pgx/v5/stdlib) wrapped by rebindConnector. The pools
// mirror SQLite's: W holds one connection (the stores assume one writer,
// docs/sql-portability.md), R is a pool of read-only sessions. There is no
// checkpoint connection. The writer's connection holds the daemon's lock,
// a session advisory lock, instead of a file lock: should it be
// reconnected, it takes the lock again or fails.
func openPostgres(ctx context.Context, p string, migrations fs.FS) (*DB, error) {
	name := Display(p)
	texts := &reboundTexts{}
	open := func(params map[string]string, opts ...stdlib.OptionOpenDB) (*sql.DB, error) {
		cfg, err := pgx.ParseConfig(p)
		if err != nil {
			return nil, fmt.Errorf("open database %s: %w", name, err)
		}
		for k, v := range params {
			cfg.RuntimeParams[k] = v
		}
		return sql.OpenDB(rebindConnector{Connector: stdlib.GetConnector(*cfg, opts...), texts: texts}), nil
	}
	w, err := open(nil, stdlib.OptionAfterConnect(func(ctx context.Context, c *pgx.Conn) error { return lockPostgres(ctx, c, name) }))
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		if errors.Is(err, ErrLocked) {
			return nil, err
		}
		return nil, fmt.Errorf("open database %s: %w", name, err)
	}
	r, _ := open(map[string]string{"default_transaction_read_only": "on"})
	n := max(4, runtime.GOMAXPROCS(0)*2)
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	db := &DB{W: w, R: r, Path: p, pg: true}
	db.txs = NewGroup(txRound, db.commitTxs)
	if migrations != nil {
		if err := db.migrate(ctx, migrations); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

// lockPostgres takes the daemon's advisory lock on the writer's connection
// c and checks the database sorts text byte by byte. (pgx's own API, run
// by the driver before rebinding: the SQL has no placeholders.)
func lockPostgres(ctx context.Context, c *pgx.Conn, name string) error {
	var got bool
	if err := c.QueryRow(ctx, `SELECT pg_try_advisory_lock(`+strconv.Itoa(advisoryLock)+`)`).Scan(&got); err != nil {
		return fmt.Errorf("open database %s: lock: %w", name, err)
	}
	if !got {
		return fmt.Errorf("%w: %s is used by another process (it holds the advisory lock %d); stop it, or give this one another database",
			ErrLocked, name, advisoryLock)
	}
	// Range scans and ORDER BY on ids assume byte order ("{" after every
	// letter and digit; "B" before "a"), which a linguistic collation breaks.
	var bytewise bool
	if err := c.QueryRow(ctx, `SELECT 'B' < 'a' AND 'x1-' < 'x10' AND 'x1z' < 'x1{'`).Scan(&bytewise); err != nil {
		return fmt.Errorf("open database %s: %w", name, err)
	}
	if !bytewise {
		return fmt.Errorf("open database %s: its collation does not compare text byte by byte; create it with LC_COLLATE 'C' (CREATE DATABASE ... TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C')", name)
	}
	return nil
}

// closeWriter closes the writer pool; on PostgreSQL it first releases the
// advisory lock on the writer's connection. Closing the connection alone
// releases it too, but only once the server's backend has noticed and
// exited, after Close has returned: a store reopened at once on the same
// database then found it still held (ErrLocked) now and then. Should the
// unlock fail (the server or the connection gone), closing is all there is
// left to do, as before.
func (db *DB) closeWriter() error {
	if db.pg {
		// A safety net: the unlock runs on the open connection and answers
		// at once; only a server that stopped answering takes this long.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, _ = db.W.ExecContext(ctx, `SELECT pg_advisory_unlock(`+strconv.Itoa(advisoryLock)+`)`)
		cancel()
	}
	return db.W.Close()
}

// pgBusy reports whether err is a PostgreSQL serialization failure or
// deadlock (SQLSTATE 40001, 40P01): the transaction may be retried.
func pgBusy(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// pgUnique reports whether err is PostgreSQL's unique_violation (23505).
func pgUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
