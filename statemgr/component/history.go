package component

import (
	"cmp"
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

// where is q's selection of rows, other than by ID, as SQL conditions on
// component_history (alias h), followed by extra, and the arguments of q's
// own conditions (those of extra go after them).
func (q HistoryQuery) where(extra ...string) (string, []any) {
	var conds []string
	var args []any
	if len(q.States) > 0 {
		conds = append(conds, "h.state IN ("+core.Placeholders(len(q.States))+")")
		for _, st := range q.States {
			args = append(args, st)
		}
	}
	if !q.From.IsZero() {
		conds, args = append(conds, "h.ts >= ?"), append(args, q.From.UTC().Format(core.TSFormat))
	}
	if !q.To.IsZero() {
		conds, args = append(conds, "h.ts <= ?"), append(args, q.To.UTC().Format(core.TSFormat))
	}
	conds = append(conds, extra...)
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// historyCols are the columns of a change, read into scanChange.
const historyCols = `h.seq, h.ts, h.old_state, h.old_flag, h.state, h.flag, h.cause, h.agent`

// History returns the changes q selects, by component in ID order, each
// component's oldest first.
func (s *Store) History(ctx context.Context, q HistoryQuery) ([]hsm.StateHistory, error) {
	got, err := s.changes(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read component history: %w", err)
	}
	byID := map[string][]hsm.StateChange{}
	for _, c := range got {
		byID[c.ID] = append(byID[c.ID], c.StateChange)
	}
	out := make([]hsm.StateHistory, 0, len(byID))
	for id, cs := range byID {
		slices.Reverse(cs)
		out = append(out, hsm.StateHistory{ID: id, History: cs})
	}
	slices.SortFunc(out, func(a, b hsm.StateHistory) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// changes returns the newest q.Limit changes q selects, newest first.
func (s *Store) changes(ctx context.Context, q HistoryQuery) ([]change, error) {
	if len(q.IDs) > 0 {
		return s.historyOfIDs(ctx, q)
	}
	return s.historyRows(ctx, q, false)
}

// change is a component's change and its place in its row's ids: within a
// write the last of its IDs counts as its newest change.
type change struct {
	hsm.StateChange
	pos int
}

// newer orders changes newest first.
func newer(a, b change) int {
	if a.Seq != b.Seq {
		return cmp.Compare(b.Seq, a.Seq)
	}
	return cmp.Compare(b.pos, a.pos)
}

// historyOfIDs returns the newest q.Limit changes of q.IDs, newest first.
// The rows of at most core.HistoryIndexMax IDs are looked up by ID
// (component_history_ids), so the cost follows those components' own
// changes; only the bulk rows (byid 0, few) are matched by their ids text.
func (s *Store) historyOfIDs(ctx context.Context, q HistoryQuery) ([]change, error) {
	where, args := q.where("i.id IN (" + core.Placeholders(len(q.IDs)) + ")")
	args = core.Args(args, q.IDs)
	limit := ""
	if q.Limit > 0 {
		limit, args = " LIMIT ?", append(args, q.Limit)
	}
	rows, err := s.db.R.QueryContext(ctx, `SELECT `+historyCols+`, i.id, i.pos
		FROM component_history_ids i JOIN component_history h ON h.seq = i.seq`+where+`
		ORDER BY i.seq DESC, i.pos DESC`+limit, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []change
	for rows.Next() {
		var c change
		if err := scanChange(rows, &c.StateChange, &c.ID, &c.pos); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	bulk, err := s.historyRows(ctx, q, true)
	if err != nil {
		return nil, err
	}
	out = append(out, bulk...)
	slices.SortFunc(out, newer)
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// historyRows returns the newest q.Limit changes of the history rows q
// selects, newest first, read from their ids text: of the rows not indexed
// by ID (byid 0: bulk changes, few) holding one of q.IDs when bulk, else
// of every row.
func (s *Store) historyRows(ctx context.Context, q HistoryQuery, bulk bool) ([]change, error) {
	var conds []string
	if bulk {
		conds = append(conds, "h.byid = 0")
	}
	where, args := q.where(conds...)
	rows, err := s.db.R.QueryContext(ctx, `SELECT `+historyCols+`, h.ids
		FROM component_history h`+where+` ORDER BY h.seq DESC`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []change
	for rows.Next() && (q.Limit == 0 || len(out) < q.Limit) {
		var c change
		var ids string
		if err := scanChange(rows, &c.StateChange, &ids); err != nil {
			return nil, err
		}
		if bulk {
			out = appendWanted(out, c, ids, q.IDs)
		} else {
			out = appendAll(out, c, ids)
		}
		if q.Limit > 0 && len(out) > q.Limit {
			out = out[:q.Limit]
		}
	}
	return out, rows.Err()
}

// appendAll appends c for each ID of ids (",x1,x2,"), newest (last) first.
func appendAll(out []change, c change, ids string) []change {
	list := strings.Split(strings.Trim(ids, ","), ",")
	for i := len(list) - 1; i >= 0; i-- {
		c.ID, c.pos = list[i], i
		out = append(out, c)
	}
	return out
}

// appendWanted appends c for each of want that ids (",x1,x2,") holds,
// newest (last) first. It searches the text rather than splitting it: a
// bulk row holds up to 10,000 IDs.
func appendWanted(out []change, c change, ids string, want []string) []change {
	n := len(out)
	for _, id := range want {
		i := strings.Index(ids, ","+id+",")
		if i < 0 {
			continue
		}
		c.ID, c.pos = id, strings.Count(ids[:i], ",")
		if !slices.ContainsFunc(out[n:], func(o change) bool { return o.ID == id }) { // an ID asked for twice
			out = append(out, c)
		}
	}
	slices.SortFunc(out[n:], newer)
	return out
}

// scanChange reads historyCols into c, and the columns after them into more.
func scanChange(rows *sql.Rows, c *hsm.StateChange, more ...any) error {
	var ts string
	dst := append([]any{&c.Seq, &ts, &c.OldState, &c.OldFlag, &c.State, &c.Flag, &c.Cause, &c.Agent}, more...)
	if err := rows.Scan(dst...); err != nil {
		return err
	}
	c.Timestamp, _ = time.Parse(core.TSFormat, ts)
	return nil
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
			for _, table := range []string{"component_history", "component_history_ids"} {
				if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE seq <= ?`, hi); err != nil {
					return fmt.Errorf("prune component history: %w", err)
				}
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
