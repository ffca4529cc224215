package component

import (
	"context"
	"fmt"
)

// SetDefaultHistoryLimit sets the number of changes a history GET without
// limit answers with, until the returned function restores it.
func SetDefaultHistoryLimit(n int) (restore func()) {
	old := defaultHistoryLimit
	defaultHistoryLimit = n
	return func() { defaultHistoryLimit = old }
}

// NewestChanges returns the changes q selects, newest first, each as
// "ID seq pos State" (pos: the ID's place among its write's).
func (s *Store) NewestChanges(ctx context.Context, q HistoryQuery) ([]string, error) {
	got, err := s.changes(ctx, q)
	out := make([]string, 0, len(got))
	for _, c := range got {
		out = append(out, fmt.Sprintf("%s %d %d %s", c.ID, c.Seq, c.pos, c.State))
	}
	return out, err
}
