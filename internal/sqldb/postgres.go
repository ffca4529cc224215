package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"runtime"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// IsPostgres reports whether p names a PostgreSQL database (a postgres://
// or postgresql:// URL) rather than a SQLite file.
func IsPostgres(p string) bool {
	return strings.HasPrefix(p, "postgres://") || strings.HasPrefix(p, "postgresql://")
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
// checkpoint connection, and the lock is a session advisory lock held on a
// connection of its own rather than a file lock.
func openPostgres(ctx context.Context, p string, migrations fs.FS) (*DB, error) {
	name := Display(p)
	texts := &reboundTexts{}
	open := func(params map[string]string) (*sql.DB, error) {
		cfg, err := pgx.ParseConfig(p)
		if err != nil {
			return nil, fmt.Errorf("open database %s: %w", name, err)
		}
		for k, v := range params {
			cfg.RuntimeParams[k] = v
		}
		return sql.OpenDB(rebindConnector{Connector: stdlib.GetConnector(*cfg), texts: texts}), nil
	}
	lk, err := open(nil)
	if err != nil {
		return nil, err
	}
	lk.SetMaxOpenConns(1)
	lk.SetMaxIdleConns(1)
	lock, err := lockPostgres(ctx, lk, name)
	if err != nil {
		lk.Close()
		return nil, err
	}
	w, _ := open(nil)
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	r, _ := open(map[string]string{"default_transaction_read_only": "on"})
	n := max(4, runtime.GOMAXPROCS(0)*2)
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	db := &DB{W: w, R: r, Path: p, pg: true, pgLock: lock, pgLockDB: lk}
	db.txs = NewGroup(txRound, db.commitTxs)
	if migrations != nil {
		if err := db.migrate(ctx, migrations); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

// lockPostgres takes the daemon's advisory lock on a connection of lk and
// checks the database sorts text byte by byte.
func lockPostgres(ctx context.Context, lk *sql.DB, name string) (*sql.Conn, error) {
	conn, err := lk.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", name, err)
	}
	var got bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(?)`, advisoryLock).Scan(&got); err != nil {
		conn.Close()
		return nil, fmt.Errorf("open database %s: lock: %w", name, err)
	}
	if !got {
		conn.Close()
		return nil, fmt.Errorf("%w: %s is used by another process (it holds the advisory lock %d); stop it, or give this one another database",
			ErrLocked, name, advisoryLock)
	}
	// Range scans and ORDER BY on ids assume byte order ("{" after every
	// letter and digit; "B" before "a"), which a linguistic collation breaks.
	var bytewise bool
	if err := conn.QueryRowContext(ctx, `SELECT 'B' < 'a' AND 'x1-' < 'x10' AND 'x1z' < 'x1{'`).Scan(&bytewise); err != nil {
		conn.Close()
		return nil, fmt.Errorf("open database %s: %w", name, err)
	}
	if !bytewise {
		conn.Close()
		return nil, fmt.Errorf("open database %s: its collation does not compare text byte by byte; create it with LC_COLLATE 'C' (CREATE DATABASE ... TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C')", name)
	}
	return conn, nil
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
