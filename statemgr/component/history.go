package component

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// The component history is written by the commit pipeline
// (statemgr/internal/core, history.go), in the transaction of each change;
// this file reads it and keeps it bounded.

// HistoryQuery selects component history.
type HistoryQuery struct {
	// IDs are normalised xnames; none selects every component.
	IDs []string
	// States are the States changed to; none selects any.
	States []string
	// From and To bound the changes' times, inclusive; zero is open.
	From, To time.Time
	// Limit keeps the newest Limit changes of those selected; 0 keeps all.
	Limit int
}

// History returns the changes q selects, by component in ID order, each
// component's oldest first.
func (s *Store) History(ctx context.Context, q HistoryQuery) ([]hsm.StateHistory, error) {
	var where []string
	var args []any
	in := func(col string, vals []string) {
		if len(vals) == 0 {
			return
		}
		where = append(where, col+" IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(vals)), ", ")+")")
		for _, v := range vals {
			args = append(args, v)
		}
	}
	in("id", q.IDs)
	in("state", q.States)
	if !q.From.IsZero() {
		where, args = append(where, "ts >= ?"), append(args, q.From.UTC().Format(core.TSFormat))
	}
	if !q.To.IsZero() {
		where, args = append(where, "ts <= ?"), append(args, q.To.UTC().Format(core.TSFormat))
	}
	sqlq := `SELECT seq, id, ts, old_state, old_flag, state, flag, cause, agent FROM component_history`
	if len(where) > 0 {
		sqlq += " WHERE " + strings.Join(where, " AND ")
	}
	sqlq += " ORDER BY seq DESC"
	if q.Limit > 0 {
		sqlq, args = sqlq+" LIMIT ?", append(args, q.Limit)
	}
	rows, err := s.db.R.QueryContext(ctx, sqlq, args...)
	if err != nil {
		return nil, fmt.Errorf("read component history: %w", err)
	}
	defer rows.Close()
	byID := map[string][]hsm.StateChange{}
	for rows.Next() {
		var c hsm.StateChange
		var ts string
		if err := rows.Scan(&c.Seq, &c.ID, &ts, &c.OldState, &c.OldFlag, &c.State, &c.Flag, &c.Cause, &c.Agent); err != nil {
			return nil, fmt.Errorf("read component history: %w", err)
		}
		c.Timestamp, _ = time.Parse(core.TSFormat, ts)
		byID[c.ID] = append(byID[c.ID], c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read component history: %w", err)
	}
	out := make([]hsm.StateHistory, 0, len(byID))
	for id, cs := range byID {
		slices.Reverse(cs)
		out = append(out, hsm.StateHistory{ID: id, History: cs})
	}
	slices.SortFunc(out, func(a, b hsm.StateHistory) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// HistoryRetention bounds the component history.
type HistoryRetention struct {
	// Rows is how many of the newest changes are kept; 0 keeps none.
	Rows int
	// Age, if positive, also drops the changes older than this.
	Age time.Duration
	// Every is how often the history is pruned.
	Every time.Duration
}

// HistoryPruneBatch is the most rows one pruning transaction deletes, so
// component writes never wait behind one long delete.
const HistoryPruneBatch = 10_000

// PruneHistory deletes the changes r does not keep, oldest first, in
// transactions of at most HistoryPruneBatch rows, and returns how many.
// Rows are counted by seq, which has no gaps: only the oldest are deleted.
func (s *Store) PruneHistory(ctx context.Context, r HistoryRetention) (int64, error) {
	cut, err := s.historyCut(ctx, r)
	if err != nil {
		return 0, err
	}
	var total int64
	for {
		var low sql.NullInt64
		if err := s.db.R.QueryRowContext(ctx, `SELECT MIN(seq) FROM component_history`).Scan(&low); err != nil {
			return total, fmt.Errorf("read component history: %w", err)
		}
		if !low.Valid || low.Int64 > cut {
			return total, nil
		}
		hi := min(cut, low.Int64+HistoryPruneBatch-1)
		err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, `DELETE FROM component_history WHERE seq <= ?`, hi)
			if err != nil {
				return fmt.Errorf("prune component history: %w", err)
			}
			n, _ := res.RowsAffected()
			total += n
			return nil
		})
		if err != nil {
			return total, err
		}
	}
}

// historyCut is the newest seq r drops: the rows past the newest r.Rows,
// and those before the oldest change within r.Age.
func (s *Store) historyCut(ctx context.Context, r HistoryRetention) (int64, error) {
	var top int64
	if err := s.db.R.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM component_history`).Scan(&top); err != nil {
		return 0, fmt.Errorf("read component history: %w", err)
	}
	cut := top - int64(max(r.Rows, 0))
	if r.Age <= 0 {
		return cut, nil
	}
	// Scanned in seq order from the oldest: it stops at the first recent
	// row, so it reads about as many rows as are to be deleted.
	var first int64
	err := s.db.R.QueryRowContext(ctx, `SELECT seq FROM component_history WHERE ts >= ? ORDER BY seq LIMIT 1`,
		s.now().Add(-r.Age).UTC().Format(core.TSFormat)).Scan(&first)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return top, nil
	case err != nil:
		return 0, fmt.Errorf("read component history: %w", err)
	}
	return max(cut, first-1), nil
}

// RunHistoryPruner prunes the component history to r every r.Every until
// ctx ends.
func RunHistoryPruner(ctx context.Context, s *Store, r HistoryRetention, log *slog.Logger) error {
	if r.Every <= 0 {
		return fmt.Errorf("component history pruner: interval %v must be positive", r.Every)
	}
	core.OnTick(ctx, r.Every, func() {
		n, err := s.PruneHistory(ctx, r)
		switch {
		case err != nil && ctx.Err() == nil:
			log.WarnContext(ctx, "component_history_prune_failed", "err", err)
		case n > 0:
			log.DebugContext(ctx, "component_history_pruned", "rows", n)
		}
	})
	return nil
}
