package core

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// SCNKey is the value part of an SCN; components changed to the same values
// in one write share one SCN, as HMS batches them.
type SCNKey struct {
	State, Flag, Role, SubRole, SoftwareStatus string
	// Enabled is 0 when not part of the change, 1 for false, 2 for true.
	Enabled int8
	NID     int
	HasNID  bool
}

// SCNGroups collects changed IDs per scnKey, in first-seen order.
type SCNGroups struct {
	at    time.Time
	order []SCNKey
	ids   map[SCNKey][]string
}

func NewSCNGroups(at time.Time) *SCNGroups {
	return &SCNGroups{at: at.UTC(), ids: map[SCNKey][]string{}}
}

func (g *SCNGroups) Add(k SCNKey, id string) {
	if _, ok := g.ids[k]; !ok {
		g.order = append(g.order, k)
	}
	g.ids[k] = append(g.ids[k], id)
}

// SCNMaxComponents bounds the components of one SCN. A bulk change of more
// components is split into SCNs of at most this many, in the order the
// components were given, each with its own Seq (consecutive, as they are
// committed together). Unsplit, a change of ~500,000 components made one SCN
// larger than hmnfd's 8 MiB body limit, which hmnfd refused for ever and
// which held every later SCN behind it (issue 18). Distinct Seqs, rather than
// one Seq shared by the pieces, keep "(Epoch, Seq) identifies an SCN" true
// for HTTP subscribers that dedupe on Seq alone; hmnfd dedupes per component
// and accepts either.
const SCNMaxComponents = 10_000

func (g *SCNGroups) SCNs() []hsm.SCN {
	out := make([]hsm.SCN, 0, len(g.order))
	for _, k := range g.order {
		scn := hsm.SCN{State: k.State, Flag: k.Flag, Role: k.Role, SubRole: k.SubRole,
			SoftwareStatus: k.SoftwareStatus, Timestamp: g.at}
		if k.Enabled != 0 {
			en := k.Enabled == 2
			scn.Enabled = &en
		}
		if k.HasNID {
			n := k.NID
			scn.NID = &n
		}
		for ids := range slices.Chunk(g.ids[k], SCNMaxComponents) {
			scn.Components = ids
			out = append(out, scn)
		}
	}
	return out
}

// OutboxRow is one stored SCN with its sequence number.
type OutboxRow struct {
	Seq     int64
	Created time.Time
	SCN     hsm.SCN
}

// OutboxTail keeps the newest outbox rows in memory, so consumers that keep
// up (the bus relay, callback subscribers, the Standby watchdog) read what
// was just committed without a query and a JSON decode per row. Consumers
// further behind, e.g. after a restart, read SQLite.
type OutboxTail struct {
	mu sync.RWMutex
	// Floor: every committed row with seq > floor is in rows.
	Floor int64
	Rows  []OutboxRow
	comps int // components named by rows
}

// Bounds of the tail: rows, and components over all rows (one bulk update
// can name 100,000 components in one row).
const (
	TailMaxRows       = 8192
	TailMaxComponents = 1 << 20
)

// After returns up to limit rows with seq > after; false means rows from
// there are not all in memory.
func (t *OutboxTail) After(after int64, limit int) ([]OutboxRow, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if after < t.Floor {
		return nil, false
	}
	i := sort.Search(len(t.Rows), func(i int) bool { return t.Rows[i].Seq > after })
	n := min(len(t.Rows)-i, limit)
	if n <= 0 {
		return nil, true
	}
	return slices.Clone(t.Rows[i : i+n]), true
}

// Append adds rows just committed (in seq order) and drops the oldest rows
// beyond the bounds, always keeping the last row.
func (t *OutboxTail) Append(rows []OutboxRow) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.Rows = append(t.Rows, rows...)
	for _, r := range rows {
		t.comps += len(r.SCN.Components)
	}
	if len(t.Rows) <= TailMaxRows && t.comps <= TailMaxComponents {
		return
	}
	// Trim to half the bounds at once, so trimming is amortised; the newest
	// row stays whatever its size.
	drop, comps := 0, t.comps
	for drop < len(t.Rows)-1 && (len(t.Rows)-drop > TailMaxRows/2 || comps > TailMaxComponents/2) {
		comps -= len(t.Rows[drop].SCN.Components)
		drop++
	}
	if drop == 0 {
		return
	}
	t.Floor = t.Rows[drop-1].Seq
	t.Rows = slices.Clone(t.Rows[drop:])
	t.comps = comps
}

// Expire drops the rows created before t, as compaction drops them from
// SQLite, so a consumer behind them sees the same gap in either place.
func (t *OutboxTail) Expire(before time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	drop := 0
	for drop < len(t.Rows) && t.Rows[drop].Created.Before(before) {
		t.comps -= len(t.Rows[drop].SCN.Components)
		drop++
	}
	if drop > 0 {
		t.Floor = t.Rows[drop-1].Seq
		t.Rows = slices.Clone(t.Rows[drop:])
	}
}

// OutboxAfter returns up to limit outbox rows with seq > after, in order.
// The rows are shared: callers must not modify them.
func (s *Store) OutboxAfter(ctx context.Context, after int64, limit int) ([]OutboxRow, error) {
	if rows, ok := s.Tail.After(after, limit); ok {
		return rows, nil
	}
	rows, err := s.DB.R.QueryContext(ctx, `SELECT seq, created, payload FROM scn_outbox WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read scn outbox: %w", err)
	}
	defer rows.Close()
	var out []OutboxRow
	for rows.Next() {
		var r OutboxRow
		var created string
		var payload []byte
		if err := rows.Scan(&r.Seq, &created, &payload); err != nil {
			return nil, fmt.Errorf("read scn outbox: %w", err)
		}
		if err := json.Unmarshal(payload, &r.SCN); err != nil {
			return nil, fmt.Errorf("decode scn %d: %w", r.Seq, err)
		}
		r.Created, _ = time.Parse(TSFormat, created)
		r.SCN.Seq = r.Seq
		out = append(out, r)
	}
	return out, rows.Err()
}

// Cursor returns the stored position of an outbox consumer.
func (s *Store) Cursor(ctx context.Context, name string) (int64, error) {
	var seq int64
	err := s.DB.R.QueryRowContext(ctx, `SELECT seq FROM scn_cursors WHERE name = ?`, name).Scan(&seq)
	if err == sql.ErrNoRows {
		return 0, problem.NotFoundf("scn cursor %s: none", name)
	}
	if err != nil {
		return 0, fmt.Errorf("read scn cursor %s: %w", name, err)
	}
	return seq, nil
}

// SetCursor records that consumer name has everything up to seq. It goes
// through the group committer, so under load cursor updates share the
// transaction of the component writes instead of adding commits of their
// own. A cursor that does not exist (its subscription was deleted) is not
// Created again.
func (s *Store) SetCursor(ctx context.Context, name string, seq int64) error {
	_, err := s.Write(ctx, func(*View) (*Plan, error) {
		return &Plan{Cursors: []cursorPos{{Name: name, Seq: seq}}}, nil
	})
	return err
}

// cursorPos is a consumer's new position in the outbox.
type cursorPos struct {
	Name string
	Seq  int64
}

// CreateCursor creates consumer name's cursor at seq unless it exists.
func (s *Store) CreateCursor(ctx context.Context, name string, seq int64) error {
	return s.DB.WriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO scn_cursors (name, seq) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`, name, seq)
		if err != nil {
			return fmt.Errorf("create scn cursor %s: %w", name, err)
		}
		return nil
	})
}

// loadEpoch reads the database's epoch, setting it at the first open.
func (s *Store) loadEpoch(ctx context.Context) error {
	err := s.DB.WriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO hsm_meta (key, value) VALUES ('epoch', ?) ON CONFLICT (key) DO NOTHING`,
			strconv.FormatInt(s.Now().UnixNano(), 10))
		return err
	})
	var v string
	if err == nil {
		err = s.DB.R.QueryRowContext(ctx, `SELECT value FROM hsm_meta WHERE key = 'epoch'`).Scan(&v)
	}
	if err == nil {
		s.Epoch, err = strconv.ParseInt(v, 10, 64)
	}
	if err != nil {
		return fmt.Errorf("hsm database epoch: %w", err)
	}
	return nil
}

// loadOutboxFloor starts the in-memory tail after the newest stored row.
func (s *Store) loadOutboxFloor(ctx context.Context) error {
	var floor int64
	if err := s.DB.R.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM scn_outbox`).Scan(&floor); err != nil {
		return fmt.Errorf("read scn outbox: %w", err)
	}
	s.Tail.Floor = floor
	return nil
}

// CompactOutbox deletes the rows every cursor has passed, and the rows older
// than keepSince whatever the cursors say (the retention limit). It returns
// how many rows were expired unpublished for some consumer.
func (s *Store) CompactOutbox(ctx context.Context, keepSince time.Time) (expired int64, err error) {
	err = s.DB.WriteTx(ctx, func(tx *sql.Tx) error {
		var low sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT MIN(seq) FROM scn_cursors`).Scan(&low); err != nil {
			return fmt.Errorf("read scn cursors: %w", err)
		}
		if low.Valid {
			if _, err := tx.ExecContext(ctx, `DELETE FROM scn_outbox WHERE seq <= ?`, low.Int64); err != nil {
				return fmt.Errorf("compact scn outbox: %w", err)
			}
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM scn_outbox WHERE created < ?`, keepSince.UTC().Format(TSFormat))
		if err != nil {
			return fmt.Errorf("expire scn outbox: %w", err)
		}
		expired, _ = res.RowsAffected()
		return nil
	})
	if err == nil {
		s.Tail.Expire(keepSince)
	}
	return expired, err
}

// OutboxLen returns the number of rows in the outbox.
func (s *Store) OutboxLen(ctx context.Context) (int64, error) {
	var n int64
	if err := s.DB.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM scn_outbox`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count scn outbox: %w", err)
	}
	return n, nil
}

// Idle waits for new outbox rows; false means ctx ended.
func Idle(ctx context.Context, wake <-chan struct{}) bool {
	select {
	case <-ctx.Done():
		return false
	case <-wake:
		return true
	}
}

// OutboxBatchRows is how many outbox rows a consumer reads at once.
const OutboxBatchRows = 256
