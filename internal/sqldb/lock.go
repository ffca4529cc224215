package sqldb

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ErrLocked is returned by Open when another process holds the database file.
var ErrLocked = errors.New("database in use")

// lockFile takes an exclusive, non-blocking POSIX record lock on <p>.lock,
// created if absent. SQLite itself would let a second daemon open the same
// file and both would serve their own diverging in-memory caches of it; the
// lock makes the second one refuse to start instead. The lock goes with the
// process, so a crash never leaves a stale one behind. It is a POSIX lock
// (fcntl) rather than flock because it must stop another process only: tests
// and tools that open a second handle on a database in the same process keep
// working (the cost: closing any handle on the lock file in this process
// releases it, which only such a second handle does). The lock file is a
// sibling of the database so that SQLite's own locks on it stay independent.
func lockFile(p string) (*os.File, error) {
	name := p + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open database %s: lock: %w", p, err)
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		f.Close()
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) {
			return nil, fmt.Errorf("%w: %s is used by another process (it holds %s); stop it, or give this one another database",
				ErrLocked, p, name)
		}
		return nil, fmt.Errorf("open database %s: lock %s: %w", p, name, err)
	}
	return f, nil
}
