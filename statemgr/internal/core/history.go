package core

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/sqldb"
)

// Cause is what made a component write, recorded with the State and Flag
// changes it makes in the component history (component_history).
type Cause struct {
	// Kind is hsm.CauseAPI, hsm.CauseDiscovery, ...; "" when unknown.
	Kind string
	// Agent names the API caller (its User-Agent) for hsm.CauseAPI.
	Agent string
}

type causeKey struct{}

// WithCause returns ctx carrying c: the writes made with it (Store.Write)
// record c as the cause of the changes they make.
func WithCause(ctx context.Context, c Cause) context.Context {
	return context.WithValue(ctx, causeKey{}, c)
}

func causeOf(ctx context.Context) Cause {
	c, _ := ctx.Value(causeKey{}).(Cause)
	return c
}

// MaxAgentLen bounds the stored Agent: a User-Agent is the caller's to choose.
const MaxAgentLen = 64

// AgentOf is the Agent of a request's User-Agent: its first product token
// ("hbtd" of "hbtd/1.2 (linux)"), printable ASCII, at most MaxAgentLen bytes.
func AgentOf(userAgent string) string {
	a, _, _ := strings.Cut(strings.TrimSpace(userAgent), " ")
	a, _, _ = strings.Cut(a, "/")
	a = strings.Map(func(r rune) rune {
		if r <= ' ' || r > '~' {
			return -1
		}
		return r
	}, a)
	if len(a) > MaxAgentLen {
		a = a[:MaxAgentLen]
	}
	return a
}

// HistoryMaxIDs bounds the components of one history row, as
// SCNMaxComponents bounds an SCN's: a larger change is stored as several rows.
const HistoryMaxIDs = SCNMaxComponents

// historyKey is a change of State and Flag.
type historyKey struct{ oldState, oldFlag, state, flag string }

// historyRow is the components one write changed the same way, stored as
// one row of component_history.
type historyRow struct {
	historyKey
	cause Cause
	ids   []string
}

// historyOf appends the State and Flag changes p makes, against the state
// v holds before p applies, one row per distinct change: a new component
// (old State and Flag "") and any whose State or Flag differs from the
// record it replaces. Deletions are not recorded. Rows are per write, never
// shared by two writes of a batch, so the changes of one component stay in
// the order they were made.
func historyOf(v *View, p *Plan, c Cause, out []historyRow) []historyRow {
	at := map[historyKey]int{}
	for _, r := range p.Puts {
		k := historyKey{state: r.State, flag: r.Flag}
		if old := v.Get(r.ID); old != nil {
			if old.State == r.State && old.Flag == r.Flag {
				continue
			}
			k.oldState, k.oldFlag = old.State, old.Flag
		}
		i, ok := at[k]
		if !ok || len(out[i].ids) == HistoryMaxIDs {
			i = len(out)
			at[k] = i
			out = append(out, historyRow{historyKey: k, cause: c})
		}
		out[i].ids = append(out[i].ids, r.ID)
	}
	return out
}

// historyChunk is how many rows one INSERT stores.
const historyChunk = 64

// historyIDsChunk is how many component_history_ids rows one INSERT stores.
const historyIDsChunk = 256

// HistoryIndexMax is the most IDs a history row may have for them to be
// indexed one by one (component_history_ids; the row's byid is 1). Larger
// rows (bulk changes) are found by matching their ids text: indexing each
// of a bulk change's 10,000 IDs took its write from about 120 to 215 ms of
// CPU, the cost a row per write saved.
const HistoryIndexMax = 64

// writeHistory stores rows, stamped at, in tx. A bulk change of 10,000
// components that all move the same way is one row: its IDs are one text
// column, delimited by commas at both ends (",x1,x2,"), read back whole by
// the unfiltered history and matched with LIKE for a large row. Each ID of
// a row of at most HistoryIndexMax is also a row of component_history_ids
// (ID, seq, its position in the row), which the history of given xnames
// reads by index. Storing a full row per component doubled the time of a
// bulk StateData of 10,000.
func (s *Store) writeHistory(ctx context.Context, tx *sql.Tx, rows []historyRow, at time.Time) error {
	if len(rows) == 0 {
		return nil
	}
	st := &stmts{db: s.DB, tx: tx}
	defer st.close()
	ts := at.UTC().Format(TSFormat)
	// The store numbers the rows itself, in the order of rows (the order
	// the changes were made), rather than reading the numbers the database
	// gives a multi-row INSERT back with RETURNING: PostgreSQL promises
	// neither the order it draws an identity's values for the rows of a
	// VALUES list nor the order RETURNING answers in. One writer holds the
	// database (sqldb's lock), so the last seq read at open, counted up,
	// is never taken; a rolled-back transaction leaves a gap, as
	// AUTOINCREMENT does.
	last := s.historySeq.Add(int64(len(rows)))
	seqs := make([]int64, len(rows))
	for i := range seqs {
		seqs[i] = last - int64(len(rows)-1-i)
	}
	var args []any
	err := sqldb.Chunks(len(rows), historyChunk, func(lo, hi int) error {
		args = args[:0]
		for i, r := range rows[lo:hi] {
			args = append(args, seqs[lo+i], ts, r.oldState, r.oldFlag, r.state, r.flag, r.cause.Kind, r.cause.Agent,
				len(r.ids), ","+strings.Join(r.ids, ",")+",", btoi(len(r.ids) <= HistoryIndexMax))
		}
		q := `INSERT INTO component_history (seq, ts, old_state, old_flag, state, flag, cause, agent, n, ids, byid) VALUES ` +
			sqldb.Placeholders(hi-lo, 11)
		if err := st.exec(ctx, q, args...); err != nil {
			return fmt.Errorf("record component history: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return writeHistoryIDs(ctx, st, rows, seqs)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// writeHistoryIDs stores a component_history_ids row for each ID of each
// of rows, whose seqs are seqs, that has at most HistoryIndexMax IDs.
func writeHistoryIDs(ctx context.Context, st *stmts, rows []historyRow, seqs []int64) error {
	type idRow struct {
		seq int64
		pos int
		id  string
	}
	var all []idRow
	for i, r := range rows {
		if len(r.ids) > HistoryIndexMax {
			continue
		}
		for pos, id := range r.ids {
			all = append(all, idRow{seq: seqs[i], pos: pos, id: id})
		}
	}
	args := make([]any, 0, 3*min(len(all), historyIDsChunk))
	return sqldb.Chunks(len(all), historyIDsChunk, func(lo, hi int) error {
		args = args[:0]
		for _, r := range all[lo:hi] {
			args = append(args, r.seq, r.pos, r.id)
		}
		q := `INSERT INTO component_history_ids (seq, pos, id) VALUES ` + sqldb.Placeholders(hi-lo, 3)
		if err := st.exec(ctx, q, args...); err != nil {
			return fmt.Errorf("record component history: %w", err)
		}
		return nil
	})
}

// loadHistorySeq reads the last seq of component_history, which the store
// counts on from (writeHistory). A seq AUTOINCREMENT gave a row since
// deleted may be given again: only the order of the rows kept matters.
func (s *Store) loadHistorySeq(ctx context.Context) error {
	var last int64
	if err := s.DB.R.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM component_history`).Scan(&last); err != nil {
		return fmt.Errorf("read component history: %w", err)
	}
	s.historySeq.Store(last)
	return nil
}
