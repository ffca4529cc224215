package sqldb

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ErrLocked is returned by Open when another process (or another open DB in
// this one) holds the database file.
var ErrLocked = errors.New("database in use")

// lockFile takes an exclusive, non-blocking flock on <p>.lock, created if
// absent. SQLite itself would let a second daemon open the same file and
// both would serve their own diverging in-memory caches of it; the lock
// makes the second one refuse to start instead. The lock goes with the
// process, so a crash never leaves a stale one behind. The lock file is a
// sibling rather than the database itself because SQLite's own POSIX locks
// on the database must stay independent of it.
func lockFile(p string) (*os.File, error) {
	name := p + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open database %s: lock: %w", p, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is used by another process (it holds %s); stop it, or give this one another database",
				ErrLocked, p, name)
		}
		return nil, fmt.Errorf("open database %s: lock %s: %w", p, name, err)
	}
	return f, nil
}
