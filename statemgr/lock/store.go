// Package lock serves HSM's /locks: component locks, the reservation-
// disabled flag, admin and service reservations, and their status; and reaps
// expired reservations.
package lock

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// Store is the locks and reservations, over the shared core (whose
// component and reservation indexes it keeps up to date).
type Store struct {
	core  coreIndexes
	db    *sqldb.DB
	now   func() time.Time
	ix    *core.Index
	rx    *core.ResvIndex
	vocab *core.Vocab
	// lockMu and resvMu are the core's LockMu and ResvMu, shared by every
	// Store over one core.
	lockMu, resvMu *sync.Mutex
}

// coreIndexes is what the locks read of the shared core's indexes.
type coreIndexes interface {
	Matching(f core.Filter, fn func(r *core.Record))
	WithGroups(f *core.Filter, fn func(all []*core.Record))
	StatusJSON(f core.Filter, want core.StatusWant) []byte
	LockBitsChanged(ctx context.Context, ids []string) error
}

// NewStore returns the locks kept in c's database.
func NewStore(c *core.Store) *Store {
	return &Store{core: c, db: c.DB, now: c.Now, ix: c.Ix, rx: c.Rx, vocab: c.Vocab(), lockMu: &c.LockMu, resvMu: &c.ResvMu}
}

// glOp is one of the locks v2 operations.
type glOp int

const (
	opLock glOp = iota
	opUnlock
	opRepair
	opDisable
	opRemove
	opReserveAdmin
	opReserveService
	opRelease
	opRenew
)

// glLockRow is the lock state of one component inside a transaction.
type glLockRow struct {
	id               string
	locked, disabled bool
	created, expires sql.NullInt64
	reserved         bool
}

// glCheck returns why op cannot apply to r, or "".
func glCheck(op glOp, r glLockRow) string {
	switch op {
	case opLock:
		switch {
		case r.locked:
			return hsm.ReasonLocked
		case r.reserved:
			return hsm.ReasonReserved
		}
	case opUnlock:
		if !r.locked {
			return hsm.ReasonUnlocked
		}
	case opRemove:
		if !r.reserved {
			return hsm.ReasonNotFound
		}
	case opReserveAdmin, opReserveService:
		switch {
		case r.disabled:
			return hsm.ReasonDisabled
		case op == opReserveAdmin && !r.locked:
			return hsm.ReasonUnlocked // admin reservations are taken on locked components
		case op == opReserveService && r.locked:
			return hsm.ReasonLocked
		case r.reserved:
			return hsm.ReasonReserved
		}
	}
	return ""
}

// glOpResult is the outcome of an operation.
type glOpResult struct {
	total  int
	ok     []string
	failed []hsm.FailedID
	keys   []hsm.ReservationKeys
	// at is the time the operation ran at (its transaction's now).
	at time.Time
}

// foundNone says the selection found no component: nothing succeeded and
// every failure is NotFound.
func (r glOpResult) foundNone() bool {
	if len(r.ok) > 0 {
		return false
	}
	for _, f := range r.failed {
		if f.Reason != hsm.ReasonNotFound {
			return false
		}
	}
	return true
}

func (r glOpResult) lockResult() hsm.LockResult {
	return hsm.LockResult{
		Counts:  hsm.Counts{Total: r.total, Success: len(r.ok), Failure: len(r.failed)},
		Success: hsm.IDList{ComponentIDs: glNonNilSlice(r.ok)},
		Failure: glNonNilSlice(r.failed),
	}
}

// glRigidError is the error a rigid operation returns when any component fails.
func glRigidError(field string, r glOpResult) error {
	var b strings.Builder
	for i, f := range r.failed {
		if i == 10 {
			fmt.Fprintf(&b, ", and %d more", len(r.failed)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (%s)", f.ID, f.Reason)
	}
	return problem.Invalidf("%s: %d of %d components cannot be changed, so nothing was (ProcessingModel rigid): %s",
		field, len(r.failed), r.total, b.String())
}

// lockOp runs a lock, unlock, disable, repair or remove and brings the
// components index's copy of the lock bits up to date. lockMu makes the two
// one step: otherwise two ops on one component could commit in one order and
// refresh the index in the other, leaving it wrong until the next op.
func (s *Store) lockOp(ctx context.Context, op glOp, l glLockSelection, log *slog.Logger) (glOpResult, error) {
	s.lockMu.Lock()
	defer s.lockMu.Unlock()
	res, err := s.runLockOp(ctx, op, l, 0)
	if err != nil || op == opRemove || len(res.ok) == 0 {
		return res, err
	}
	// The change is committed whatever happens here (a client gone is no
	// reason to skip it), so a failed refresh is logged, not returned.
	if err := s.core.LockBitsChanged(context.WithoutCancel(ctx), res.ok); err != nil {
		log.WarnContext(ctx, "lock_bits_refresh_failed", "err", err)
	}
	return res, nil
}

// runLockOp runs a selection-based operation in one transaction and then
// brings the reservation index up to date. dur is the lifetime of service
// reservations.
func (s *Store) runLockOp(ctx context.Context, op glOp, l glLockSelection, dur time.Duration) (glOpResult, error) {
	s.resvMu.Lock()
	defer s.resvMu.Unlock()
	var res glOpResult
	targets, missing := s.lockTargets(l)
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		now := s.now()
		res = glOpResult{at: now}
		rows, gone, err := glLockRows(ctx, tx, targets, l.all(), now)
		if err != nil {
			return err
		}
		if len(l.ids) == 0 {
			gone = nil // deleted since the selection: no longer selected
		}
		for _, id := range append(slices.Clone(missing), gone...) {
			res.failed = append(res.failed, hsm.FailedID{ID: id, Reason: hsm.ReasonNotFound})
		}
		for _, r := range rows {
			if op == opRemove && l.all() && !r.reserved {
				continue // "remove everything" means every reservation, not every component
			}
			if reason := glCheck(op, r); reason != "" {
				res.failed = append(res.failed, hsm.FailedID{ID: r.id, Reason: reason})
			} else {
				res.ok = append(res.ok, r.id)
			}
		}
		res.total = len(res.ok) + len(res.failed)
		slices.SortFunc(res.failed, func(a, b hsm.FailedID) int { return strings.Compare(a.ID, b.ID) })
		if l.model == hsm.ModelRigid && len(res.failed) > 0 {
			return glRigidError("ComponentIDs", res)
		}
		return glApply(ctx, tx, op, now, dur, &res)
	})
	if err == nil {
		switch op {
		case opDisable, opRemove:
			s.rx.Dropped(res.ok)
		case opReserveAdmin, opReserveService:
			s.rx.Reserved(res.keys, res.at)
		}
	}
	return res, err
}

// glApply changes the components in res.ok.
func glApply(ctx context.Context, tx *sql.Tx, op glOp, now time.Time, dur time.Duration, res *glOpResult) error {
	switch op {
	case opLock, opUnlock:
		return glSetLockColumn(ctx, tx, "locked", op == opLock, res.ok)
	case opRepair:
		return glSetLockColumn(ctx, tx, "reservation_disabled", false, res.ok)
	case opDisable:
		if err := glSetLockColumn(ctx, tx, "reservation_disabled", true, res.ok); err != nil {
			return err
		}
		return glDeleteReservations(ctx, tx, res.ok)
	case opRemove:
		return glDeleteReservations(ctx, tx, res.ok)
	case opReserveAdmin, opReserveService:
		var err error
		res.keys, err = glInsertReservations(ctx, tx, res.ok, now, dur, op == opReserveService)
		return err
	}
	return fmt.Errorf("lock operation %d: not a selection operation", op)
}

// glSetLockColumn sets components.locked or components.reservation_disabled
// (col is one of those two constants, never input) for ids.
func glSetLockColumn(ctx context.Context, tx *sql.Tx, col string, v bool, ids []string) error {
	val := 0
	if v {
		val = 1
	}
	for _, c := range core.Chunks(ids) {
		if _, err := tx.ExecContext(ctx, `UPDATE components SET `+col+` = ? WHERE id IN (`+core.Placeholders(len(c))+`)`, core.Args([]any{val}, c)...); err != nil {
			return fmt.Errorf("set %s: %w", col, err)
		}
	}
	return nil
}

func glDeleteReservations(ctx context.Context, tx *sql.Tx, ids []string) error {
	for _, c := range core.Chunks(ids) {
		if _, err := tx.ExecContext(ctx, `DELETE FROM reservations WHERE component_id IN (`+core.Placeholders(len(c))+`)`, core.Args(nil, c)...); err != nil {
			return fmt.Errorf("delete reservations: %w", err)
		}
	}
	return nil
}

// glParseStatusWant reads the lock state filters; names are matched without
// regard to case, as HSM decodes its query through encoding/json, and a bad
// value is 400 with HSM's text ("bad 'Reserved' query parameter: ...").
func glParseStatusWant(q url.Values) (core.StatusWant, error) {
	var w core.StatusWant
	for _, p := range []struct {
		name string
		dst  **bool
	}{{"Locked", &w.Locked}, {"Reserved", &w.Reserved}, {"ReservationDisabled", &w.Disabled}} {
		for k, vs := range q {
			if !strings.EqualFold(k, p.name) || len(vs) == 0 || vs[0] == "" {
				continue
			}
			b, err := strconv.ParseBool(vs[0])
			if err != nil {
				return w, problem.Invalidf("bad '%s' query parameter: %v", p.name, err)
			}
			*p.dst = &b
		}
	}
	return w, nil
}

// lockStatusByID returns the lock state of ids, from the in-memory indexes;
// unknown IDs go to NotFound.
func (s *Store) lockStatusByID(ids []string) hsm.LockStatusList {
	out := hsm.LockStatusList{Components: make([]hsm.LockStatus, 0, len(ids))}
	now := s.now().UnixMilli()
	s.ix.View(func([]*core.Record) {
		s.rx.Mu.RLock()
		defer s.rx.Mu.RUnlock()
		for _, id := range ids {
			r := s.ix.ByID[id]
			if r == nil {
				out.NotFound = append(out.NotFound, id)
				continue
			}
			out.Components = append(out.Components, core.LockStatus(r, s.rx.By[id], now))
		}
	})
	slices.SortFunc(out.Components, func(a, b hsm.LockStatus) int { return strings.Compare(a.ID, b.ID) })
	return out
}
