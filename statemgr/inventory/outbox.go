package inventory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// cursor returns where the outbox consumer name reads from, creating its
// cursor at the outbox's end the first time.
func (s *Store) cursor(ctx context.Context, name string) (int64, error) {
	cur, err := s.core.Cursor(ctx, name)
	if errors.Is(err, problem.ErrNotFound) {
		err = s.db.R.QueryRowContext(ctx, `SELECT COALESCE(MAX(m), 0) FROM (
			SELECT MAX(seq) AS m FROM scn_outbox UNION ALL SELECT MAX(seq) FROM scn_cursors) AS t`).Scan(&cur)
		if err == nil {
			err = s.core.CreateCursor(ctx, name, cur)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("%s cursor: %w", name, err)
	}
	return cur, nil
}

// followOutbox hands fn each batch of the SCN outbox after cur, in order,
// and stores the consumer name's cursor past it, until ctx ends (nil) or
// fn returns false (nil too: fn saw ctx end).
func (s *Store) followOutbox(ctx context.Context, name string, cur int64, log *slog.Logger, fn func([]core.OutboxRow) bool) error {
	for {
		wake := s.outbox.Wait()
		rows, err := s.core.OutboxAfter(ctx, cur, core.OutboxBatchRows)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if len(rows) == 0 {
			if !core.Idle(ctx, wake) {
				return nil
			}
			continue
		}
		if !fn(rows) {
			return nil
		}
		cur = rows[len(rows)-1].Seq
		// The cursor shares the transaction of other writes; if that fails,
		// the position stays known here and is stored with the next batch.
		if err := s.core.SetCursor(context.WithoutCancel(ctx), name, cur); err != nil {
			log.WarnContext(ctx, "outbox_cursor_not_saved", "consumer", name, "seq", cur, "err", err)
		}
	}
}
