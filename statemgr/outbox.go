package statemgr

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hmsuite/hms/internal/problem"
)

// scnKey is the value part of an SCN; components changed to the same values
// in one write share one SCN, as HMS batches them.
type scnKey struct {
	State, Flag, Role, SubRole, SoftwareStatus string
	// Enabled is 0 when not part of the change, 1 for false, 2 for true.
	Enabled int8
	NID     int
	HasNID  bool
}

// scnGroups collects changed IDs per scnKey, in first-seen order.
type scnGroups struct {
	at    time.Time
	order []scnKey
	ids   map[scnKey][]string
}

func newSCNGroups(at time.Time) *scnGroups {
	return &scnGroups{at: at.UTC(), ids: map[scnKey][]string{}}
}

func (g *scnGroups) add(k scnKey, id string) {
	if _, ok := g.ids[k]; !ok {
		g.order = append(g.order, k)
	}
	g.ids[k] = append(g.ids[k], id)
}

func (g *scnGroups) scns() []SCN {
	out := make([]SCN, 0, len(g.order))
	for _, k := range g.order {
		scn := SCN{Components: g.ids[k], State: k.State, Flag: k.Flag, Role: k.Role, SubRole: k.SubRole,
			SoftwareStatus: k.SoftwareStatus, Timestamp: g.at}
		if k.Enabled != 0 {
			en := k.Enabled == 2
			scn.Enabled = &en
		}
		if k.HasNID {
			n := k.NID
			scn.NID = &n
		}
		out = append(out, scn)
	}
	return out
}

// outboxRow is one stored SCN with its sequence number.
type outboxRow struct {
	Seq     int64
	Created time.Time
	SCN     SCN
}

// outboxAfter returns up to limit outbox rows with seq > after, in order.
func (s *Store) outboxAfter(ctx context.Context, after int64, limit int) ([]outboxRow, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT seq, created, payload FROM scn_outbox WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read scn outbox: %w", err)
	}
	defer rows.Close()
	var out []outboxRow
	for rows.Next() {
		var r outboxRow
		var created string
		var payload []byte
		if err := rows.Scan(&r.Seq, &created, &payload); err != nil {
			return nil, fmt.Errorf("read scn outbox: %w", err)
		}
		if err := json.Unmarshal(payload, &r.SCN); err != nil {
			return nil, fmt.Errorf("decode scn %d: %w", r.Seq, err)
		}
		r.Created, _ = time.Parse(tsFormat, created)
		r.SCN.Seq = r.Seq
		out = append(out, r)
	}
	return out, rows.Err()
}

// cursor returns the stored position of an outbox consumer.
func (s *Store) cursor(ctx context.Context, name string) (int64, error) {
	var seq int64
	err := s.db.R.QueryRowContext(ctx, `SELECT seq FROM scn_cursors WHERE name = ?`, name).Scan(&seq)
	if err == sql.ErrNoRows {
		return 0, problem.NotFoundf("scn cursor %s: none", name)
	}
	if err != nil {
		return 0, fmt.Errorf("read scn cursor %s: %w", name, err)
	}
	return seq, nil
}

// setCursor records that consumer name has everything up to seq.
func (s *Store) setCursor(ctx context.Context, name string, seq int64) error {
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO scn_cursors (name, seq) VALUES (?, ?)
			ON CONFLICT (name) DO UPDATE SET seq = excluded.seq`, name, seq)
		if err != nil {
			return fmt.Errorf("store scn cursor %s: %w", name, err)
		}
		return nil
	})
}

// compactOutbox deletes the rows every cursor has passed, and the rows older
// than keepSince whatever the cursors say (the retention limit). It returns
// how many rows were expired unpublished for some consumer.
func (s *Store) compactOutbox(ctx context.Context, keepSince time.Time) (expired int64, err error) {
	err = s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		var low sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT MIN(seq) FROM scn_cursors`).Scan(&low); err != nil {
			return fmt.Errorf("read scn cursors: %w", err)
		}
		if low.Valid {
			if _, err := tx.ExecContext(ctx, `DELETE FROM scn_outbox WHERE seq <= ?`, low.Int64); err != nil {
				return fmt.Errorf("compact scn outbox: %w", err)
			}
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM scn_outbox WHERE created < ?`, keepSince.UTC().Format(tsFormat))
		if err != nil {
			return fmt.Errorf("expire scn outbox: %w", err)
		}
		expired, _ = res.RowsAffected()
		return nil
	})
	return expired, err
}

// outboxLen returns the number of rows in the outbox.
func (s *Store) outboxLen(ctx context.Context) (int64, error) {
	var n int64
	if err := s.db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM scn_outbox`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count scn outbox: %w", err)
	}
	return n, nil
}

// tsFormat is the fixed-width UTC time format of outbox rows, so that string
// order is time order.
const tsFormat = "2006-01-02T15:04:05.000000000Z"
