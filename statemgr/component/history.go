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
// (statemgr/internal/core, history.go), in the transaction of each change,
// one row per write and distinct change with the IDs it changed; this file
// reads it and keeps it bounded.

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

// where is q's selection of rows as SQL conditions and their arguments.
func (q HistoryQuery) where() (string, []any) {
	var conds []string
	var args []any
	if len(q.IDs) > 0 {
		var or []string
		for _, id := range q.IDs {
			or, args = append(or, "ids LIKE ?"), append(args, "%,"+id+",%") // an xname holds no LIKE wildcard
		}
		conds = append(conds, "("+strings.Join(or, " OR ")+")")
	}
	if len(q.States) > 0 {
		conds = append(conds, "state IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(q.States)), ", ")+")")
		for _, st := range q.States {
			args = append(args, st)
		}
	}
	if !q.From.IsZero() {
		conds, args = append(conds, "ts >= ?"), append(args, q.From.UTC().Format(core.TSFormat))
	}
	if !q.To.IsZero() {
		conds, args = append(conds, "ts <= ?"), append(args, q.To.UTC().Format(core.TSFormat))
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// History returns the changes q selects, by component in ID order, each
// component's oldest first.
func (s *Store) History(ctx context.Context, q HistoryQuery) ([]hsm.StateHistory, error) {
	where, args := q.where()
	rows, err := s.db.R.QueryContext(ctx, `SELECT seq, ts, old_state, old_flag, state, flag, cause, agent, ids
		FROM component_history`+where+` ORDER BY seq DESC`, args...)
	if err != nil {
		return nil, fmt.Errorf("read component history: %w", err)
	}
	defer rows.Close()
	want := map[string]bool{}
	for _, id := range q.IDs {
		want[id] = true
	}
	byID := map[string][]hsm.StateChange{}
	n := 0
	for rows.Next() && (q.Limit == 0 || n < q.Limit) {
		var c hsm.StateChange
		var ts, ids string
		if err := rows.Scan(&c.Seq, &ts, &c.OldState, &c.OldFlag, &c.State, &c.Flag, &c.Cause, &c.Agent, &ids); err != nil {
			return nil, fmt.Errorf("read component history: %w", err)
		}
		c.Timestamp, _ = time.Parse(core.TSFormat, ts)
		list := strings.Split(strings.Trim(ids, ","), ",")
		// Newest first: the last of a write's IDs counts as its newest change.
		for i := len(list) - 1; i >= 0 && (q.Limit == 0 || n < q.Limit); i-- {
			if len(want) > 0 && !want[list[i]] {
				continue
			}
			c.ID = list[i]
			byID[c.ID] = append(byID[c.ID], c)
			n++
		}
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
	// Rows is how many of the newest changes are kept; 0 keeps none. The
	// changes of one write go together, so fewer may be kept.
	Rows int
	// Age, if positive, also drops the changes older than this.
	Age time.Duration
	// Every is how often the history is pruned.
	Every time.Duration
	// Batch is the most rows (writes) one pruning transaction deletes;
	// 0 means HistoryPruneBatch.
	Batch int
}

// HistoryPruneBatch is the default of HistoryRetention.Batch: component
// writes never wait behind one long delete.
const HistoryPruneBatch = 1000

// PruneHistory deletes the changes r does not keep, oldest first, in
// transactions of at most r.Batch rows, and returns how many changes.
func (s *Store) PruneHistory(ctx context.Context, r HistoryRetention) (int64, error) {
	cut, err := s.historyCut(ctx, r)
	if err != nil || cut == 0 {
		return 0, err
	}
	batch := int64(r.Batch)
	if batch <= 0 {
		batch = HistoryPruneBatch
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
		hi := min(cut, low.Int64+batch-1)
		err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
			var n int64
			if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(n), 0) FROM component_history WHERE seq <= ?`, hi).Scan(&n); err != nil {
				return fmt.Errorf("read component history: %w", err)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM component_history WHERE seq <= ?`, hi); err != nil {
				return fmt.Errorf("prune component history: %w", err)
			}
			total += n
			return nil
		})
		if err != nil {
			return total, err
		}
	}
}

// historyCut is the newest seq r drops (0: none): the row whose changes
// take the count past r.Rows, counted from the newest, and the rows before
// the oldest change within r.Age.
func (s *Store) historyCut(ctx context.Context, r HistoryRetention) (int64, error) {
	cut, err := s.pastRows(ctx, r.Rows)
	if err != nil || r.Age <= 0 {
		return cut, err
	}
	// Scanned in seq order from the oldest: it stops at the first recent
	// row, so it reads about as many rows as are to be deleted.
	var first int64
	err = s.db.R.QueryRowContext(ctx, `SELECT seq FROM component_history WHERE ts >= ? ORDER BY seq LIMIT 1`,
		s.now().Add(-r.Age).UTC().Format(core.TSFormat)).Scan(&first)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		err = s.db.R.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM component_history`).Scan(&first)
		if err != nil {
			return 0, fmt.Errorf("read component history: %w", err)
		}
		return first, nil
	case err != nil:
		return 0, fmt.Errorf("read component history: %w", err)
	}
	return max(cut, first-1), nil
}

// pastRows is the seq of the newest row whose changes, counted from the
// newest, go past keep (0: none does).
func (s *Store) pastRows(ctx context.Context, keep int) (int64, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT seq, n FROM component_history ORDER BY seq DESC`)
	if err != nil {
		return 0, fmt.Errorf("read component history: %w", err)
	}
	defer rows.Close()
	sum := 0
	for rows.Next() {
		var seq int64
		var n int
		if err := rows.Scan(&seq, &n); err != nil {
			return 0, fmt.Errorf("read component history: %w", err)
		}
		if sum += n; sum > keep {
			return seq, nil
		}
	}
	return 0, rows.Err()
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
			log.DebugContext(ctx, "component_history_pruned", "changes", n)
		}
	})
	return nil
}
