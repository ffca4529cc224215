package statemgr

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/problem"
)

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

func (r glLockRow) status() LockStatus {
	st := LockStatus{ID: r.id, Locked: r.locked, Reserved: r.reserved, ReservationDisabled: r.disabled}
	if r.reserved {
		c := time.UnixMilli(r.created.Int64).UTC()
		st.CreatedTime = &c
		if r.expires.Valid {
			e := time.UnixMilli(r.expires.Int64).UTC()
			st.ExpirationTime = &e
		}
	}
	return st
}

// glCheck returns why op cannot apply to r, or "".
func glCheck(op glOp, r glLockRow) string {
	switch op {
	case opLock:
		switch {
		case r.locked:
			return ReasonLocked
		case r.reserved:
			return ReasonReserved
		}
	case opUnlock:
		if !r.locked {
			return ReasonUnlocked
		}
	case opRemove:
		if !r.reserved {
			return ReasonNotFound
		}
	case opReserveAdmin, opReserveService:
		switch {
		case r.disabled:
			return ReasonDisabled
		case op == opReserveAdmin && !r.locked:
			return ReasonUnlocked // admin reservations are taken on locked components
		case op == opReserveService && r.locked:
			return ReasonLocked
		case r.reserved:
			return ReasonReserved
		}
	}
	return ""
}

// glOpResult is the outcome of an operation.
type glOpResult struct {
	total  int
	ok     []string
	failed []FailedID
	keys   []ReservationKeys
}

func (r glOpResult) lockResult() LockResult {
	return LockResult{
		Counts:  Counts{Total: r.total, Success: len(r.ok), Failure: len(r.failed)},
		Success: IDList{ComponentIDs: glNonNilSlice(r.ok)},
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

// runLockOp runs a selection-based operation in one transaction. dur is the
// lifetime of service reservations.
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
	if err := s.LockBitsChanged(context.WithoutCancel(ctx), res.ok); err != nil {
		log.WarnContext(ctx, "lock_bits_refresh_failed", "err", err)
	}
	return res, nil
}

func (s *Store) runLockOp(ctx context.Context, op glOp, l glLockSelection, dur time.Duration) (glOpResult, error) {
	var res glOpResult
	targets, missing := s.lockTargets(l)
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		res = glOpResult{}
		now := s.now()
		rows, gone, err := glLockRows(ctx, tx, targets, l.all(), now)
		if err != nil {
			return err
		}
		if len(l.ids) == 0 {
			gone = nil // deleted since the selection: no longer selected
		}
		for _, id := range append(slices.Clone(missing), gone...) {
			res.failed = append(res.failed, FailedID{ID: id, Reason: ReasonNotFound})
		}
		for _, r := range rows {
			if op == opRemove && l.all() && !r.reserved {
				continue // "remove everything" means every reservation, not every component
			}
			if reason := glCheck(op, r); reason != "" {
				res.failed = append(res.failed, FailedID{ID: r.id, Reason: reason})
			} else {
				res.ok = append(res.ok, r.id)
			}
		}
		res.total = len(res.ok) + len(res.failed)
		slices.SortFunc(res.failed, func(a, b FailedID) int { return strings.Compare(a.ID, b.ID) })
		if l.model == ModelRigid && len(res.failed) > 0 {
			return glRigidError("ComponentIDs", res)
		}
		return glApply(ctx, tx, op, now, dur, &res)
	})
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
	for _, c := range glChunks(ids) {
		if _, err := tx.ExecContext(ctx, `UPDATE components SET `+col+` = ? WHERE id IN (`+glPlaceholders(len(c))+`)`, glArgs([]any{val}, c)...); err != nil {
			return fmt.Errorf("set %s: %w", col, err)
		}
	}
	return nil
}

func glDeleteReservations(ctx context.Context, tx *sql.Tx, ids []string) error {
	for _, c := range glChunks(ids) {
		if _, err := tx.ExecContext(ctx, `DELETE FROM reservations WHERE component_id IN (`+glPlaceholders(len(c))+`)`, glArgs(nil, c)...); err != nil {
			return fmt.Errorf("delete reservations: %w", err)
		}
	}
	return nil
}

// glStatusWant holds the locked/reserved/reservationDisabled filters of GET /locks/status.
type glStatusWant struct {
	locked, reserved, disabled *bool
}

func glParseStatusWant(q url.Values) (glStatusWant, error) {
	var w glStatusWant
	for _, p := range []struct {
		name string
		dst  **bool
	}{{"locked", &w.locked}, {"reserved", &w.reserved}, {"reservationDisabled", &w.disabled}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return w, problem.Invalidf("%s: %q is not true or false", p.name, v)
		}
		*p.dst = &b
	}
	return w, nil
}

func (w glStatusWant) match(r glLockRow) bool {
	return (w.locked == nil || *w.locked == r.locked) && (w.reserved == nil || *w.reserved == r.reserved) &&
		(w.disabled == nil || *w.disabled == r.disabled)
}

// lockStatusQuery returns the lock state of the components f selects.
func (s *Store) lockStatusQuery(ctx context.Context, f Filter, want glStatusWant) (LockStatusList, error) {
	l := glLockSelection{f: f}
	targets, _ := s.lockTargets(l)
	rows, _, err := glLockRows(ctx, s.db.R, targets, l.all(), s.now())
	if err != nil {
		return LockStatusList{}, err
	}
	out := LockStatusList{Components: []LockStatus{}, NotFound: []string{}}
	for _, r := range rows {
		if want.match(r) {
			out.Components = append(out.Components, r.status())
		}
	}
	return out, nil
}

// lockStatusByID returns the lock state of ids; unknown IDs go to NotFound.
func (s *Store) lockStatusByID(ctx context.Context, ids []string) (LockStatusList, error) {
	targets, missing := s.lockTargets(glLockSelection{ids: ids})
	rows, gone, err := glLockRows(ctx, s.db.R, targets, false, s.now())
	if err != nil {
		return LockStatusList{}, err
	}
	out := LockStatusList{Components: make([]LockStatus, 0, len(rows)), NotFound: append(glNonNilSlice(missing), gone...)}
	for _, r := range rows {
		out.Components = append(out.Components, r.status())
	}
	return out, nil
}
