package orchestrator

import (
	"context"
	"errors"

	"github.com/hmsuite/hms/internal/problem"
)

// errUnchanged tells modifySession its function has nothing to write.
var errUnchanged = errors.New("unchanged")

// sessionRetries bounds modifySession's re-reads; each conflict means
// another writer went first, so a handful suffices unless something loops.
const sessionRetries = 8

// modifySession reads a session, applies fn and writes it back only if
// nobody wrote it meanwhile; on a conflict it reads it again and re-applies
// fn, so a PATCH and an operator pass that race both keep their changes
// (each once wrote the whole copy it had read, and the later one won). fn
// returns errUnchanged when the session no longer needs its change.
func (s *Service) modifySession(ctx context.Context, name string, fn func(*Session) error) (Session, error) {
	for attempt := 0; ; attempt++ {
		sess, err := s.store.Session(ctx, name)
		if err != nil {
			return Session{}, err
		}
		if err := fn(&sess); err != nil {
			return sess, err
		}
		err = s.store.UpdateSession(ctx, &sess)
		if !errors.Is(err, problem.ErrConflict) || attempt == sessionRetries {
			return sess, err
		}
		s.log.Debug("session_write_conflict", "session", name, "attempt", attempt+1)
	}
}
