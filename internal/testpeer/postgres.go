package testpeer

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, for the admin connection
)

// Postgres is a throwaway PostgreSQL server shared by the tests of one
// package: started on the first Database call (initdb into a temporary
// directory, C collation, the server listening on a Unix socket in that
// directory only, durability off), stopped and removed by Stop. A package
// makes one in TestMain and stops it after m.Run; each test then gets a
// database of its own, so the server is started once per package.
//
// The binaries are Debian's postgresql package (/usr/lib/postgresql/N/bin,
// not on the PATH) or initdb and postgres on the PATH. When they are
// missing, Database skips the test, and fails it under CI=true. PostgreSQL
// refuses to run as root: as root (make test) the server runs as the
// postgres user the package creates, in a directory given to that user.
type Postgres struct {
	once    sync.Once
	missing string // why there is no server, when the binaries are missing
	err     error  // why the server did not start otherwise

	dir   string // temporary directory: data/, the socket, the log
	cmd   *exec.Cmd
	done  chan struct{} // closed when the server has exited
	admin *sql.DB

	mu  sync.Mutex
	n   int             // databases made
	log strings.Builder // the server's output
}

// NewPostgres returns a server that starts on first use.
func NewPostgres() *Postgres { return &Postgres{} }

// Database creates a new, empty database (C collation) and returns its URL
// (postgres://postgres@/NAME?host=SOCKETDIR). The database is dropped when
// the test ends, after the test's own cleanups (register it before opening
// it). It skips or fails t as Require does when PostgreSQL is missing.
func (p *Postgres) Database(t testing.TB) string {
	t.Helper()
	p.once.Do(func() { p.err = p.start() })
	if p.missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("test peer postgresql missing under CI=true (make peers installs it): %s", p.missing)
		}
		t.Skipf("test peer postgresql not installed (run `make peers` as root): %s", p.missing)
	}
	if p.err != nil {
		t.Fatalf("postgresql test server: %v", p.err)
	}
	p.mu.Lock()
	p.n++
	name := "t" + strconv.Itoa(p.n)
	p.mu.Unlock()
	// FILE_COPY copies template1's files: with fsync off, a tenth of the
	// time of PostgreSQL 15's default (WAL_LOG, which logs every page).
	if _, err := p.admin.ExecContext(t.Context(), "CREATE DATABASE "+name+" STRATEGY FILE_COPY"); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		if _, err := p.admin.ExecContext(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return p.url(name)
}

// DatabaseWithPassword is Database with password in its URL (the server
// trusts local users: any password is accepted), for tests that the
// password is never shown.
func (p *Postgres) DatabaseWithPassword(t testing.TB, password string) string {
	t.Helper()
	u, err := url.Parse(p.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("postgres", password)
	return u.String()
}

func (p *Postgres) url(db string) string {
	return "postgres://postgres@/" + db + "?host=" + url.QueryEscape(p.dir) + "&sslmode=disable"
}

// Stop stops the server, if it started, and removes its files.
func (p *Postgres) Stop() {
	p.once.Do(func() { p.missing = "stopped before use" })
	if p.admin != nil {
		p.admin.Close()
	}
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGQUIT) // immediate shutdown: nothing here needs to survive
		<-p.done
	}
	if p.dir != "" {
		os.RemoveAll(p.dir)
	}
}

// postgresBin is the directory of initdb and postgres: the newest of
// Debian's /usr/lib/postgresql/N/bin, else the PATH's.
func postgresBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	if len(dirs) > 0 {
		return filepath.Dir(dirs[0]), nil
	}
	pg, err := exec.LookPath("postgres")
	if err != nil {
		return "", errors.New("no /usr/lib/postgresql/*/bin/postgres and none on the PATH")
	}
	if _, err := exec.LookPath("initdb"); err != nil {
		return "", errors.New("postgres but no initdb on the PATH")
	}
	return filepath.Dir(pg), nil
}

// version is N of /usr/lib/postgresql/N/bin/postgres.
func version(p string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(p))))
	return n
}

// start makes the cluster and starts the server.
func (p *Postgres) start() error {
	bin, err := postgresBin()
	if err != nil {
		p.missing = err.Error()
		return nil
	}
	cred, err := runAs()
	if err != nil {
		p.missing = err.Error()
		return nil
	}
	// A short path: a Unix socket's path is at most 107 bytes.
	if p.dir, err = os.MkdirTemp("", "hms-pg-"); err != nil {
		return err
	}
	if cred != nil {
		if err := os.Chown(p.dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return err
		}
	}
	initdb := p.command(cred, filepath.Join(bin, "initdb"), "-D", filepath.Join(p.dir, "data"), "-U", "postgres",
		"--auth=trust", "--locale=C", "--encoding=UTF8", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w: %s", err, out)
	}
	return p.serve(cred, filepath.Join(bin, "postgres"))
}

// runAs is the credential to run PostgreSQL with: nil as a user other
// than root, the postgres user's as root.
func runAs() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root and there is no postgres user to run the server as: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func (p *Postgres) command(cred *syscall.Credential, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = p.dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C", "LC_ALL=C"}
	// The server dies with the test binary, whatever ends it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// serve starts the server and waits for it to accept connections (it says
// so on its log), then connects the admin pool.
func (p *Postgres) serve(cred *syscall.Credential, postgres string) error {
	p.cmd = p.command(cred, postgres, "-D", filepath.Join(p.dir, "data"), "-k", p.dir, "-h", "",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300", "-c", "logging_collector=off")
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	ready := make(chan struct{})
	p.done = make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			p.mu.Lock()
			p.log.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if strings.Contains(sc.Text(), "ready to accept connections") {
				once.Do(func() { close(ready) })
			}
		}
		_ = p.cmd.Wait()
		close(p.done)
	}()
	select {
	case <-ready:
	case <-p.done:
		return fmt.Errorf("postgres exited: %s", p.output())
	case <-time.After(time.Minute): // a safety net: the server is stuck, not slow
		return fmt.Errorf("postgres not ready after a minute: %s", p.output())
	}
	p.admin, err = sql.Open("pgx", p.url("postgres"))
	if err != nil {
		return err
	}
	return p.admin.Ping()
}

func (p *Postgres) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}
