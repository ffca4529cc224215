package core

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/sqldb"
)

// Cause is what made a component write, recorded with each State or Flag
// change it makes in the component history (component_history).
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

// historyRow is one State or Flag change of a component, to be stored.
type historyRow struct {
	id, oldState, oldFlag, state, flag string
	cause                              Cause
}

// historyOf returns the State and Flag changes p makes, against the state
// v holds before p applies: a new component (old State and Flag "") and
// any whose State or Flag differs from the record it replaces. Deletions
// are not recorded.
func historyOf(v *View, p *Plan, c Cause, out []historyRow) []historyRow {
	for _, r := range p.Puts {
		old := v.Get(r.ID)
		if old == nil {
			out = append(out, historyRow{id: r.ID, state: r.State, flag: r.Flag, cause: c})
			continue
		}
		if old.State != r.State || old.Flag != r.Flag {
			out = append(out, historyRow{id: r.ID, oldState: old.State, oldFlag: old.Flag, state: r.State, flag: r.Flag, cause: c})
		}
	}
	return out
}

// historyChunk is how many rows one INSERT stores: 8 values each, well
// below SQLite's (32,766) and PostgreSQL's (65,535) bound on parameters.
const historyChunk = 512

// writeHistory stores rows, stamped at, in tx: one multi-row INSERT per
// historyChunk rows, so a bulk change of 10,000 components adds about 20
// statements to its transaction rather than 10,000.
func (s *Store) writeHistory(ctx context.Context, tx *sql.Tx, rows []historyRow, at time.Time) error {
	if len(rows) == 0 {
		return nil
	}
	st := &stmts{db: s.DB, tx: tx}
	defer st.close()
	ts := at.UTC().Format(TSFormat)
	args := make([]any, 0, 8*min(len(rows), historyChunk))
	return sqldb.Chunks(len(rows), historyChunk, func(lo, hi int) error {
		args = args[:0]
		for _, r := range rows[lo:hi] {
			args = append(args, r.id, ts, r.oldState, r.oldFlag, r.state, r.flag, r.cause.Kind, r.cause.Agent)
		}
		q := `INSERT INTO component_history (id, ts, old_state, old_flag, state, flag, cause, agent) VALUES ` +
			sqldb.Placeholders(hi-lo, 8)
		if err := st.exec(ctx, q, args...); err != nil {
			return fmt.Errorf("record component history: %w", err)
		}
		return nil
	})
}
