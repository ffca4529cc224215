package lock

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// glLockSelection is a validated LockRequest.
type glLockSelection struct {
	ids   []string // normalised ComponentIDs; empty means "no ID restriction"
	f     core.Filter
	model string
}

// All reports whether the request names no component and no filter.
func (l glLockSelection) all() bool { return len(l.ids) == 0 && l.f.SelectsAll() }

// glParseLockRequest validates req with the component filter parser. With
// needSelector, a request that names no component and no filter is refused
// rather than applied to every component. A bad filter value is ErrInvalid
// with HSM's bare text (hms-messages 1.3, locks: "filter HMSError").
func glParseLockRequest(req hsm.LockRequest, v *core.Vocab, needSelector bool) (glLockSelection, error) {
	var l glLockSelection
	var err error
	if l.model, err = glModel(req.ProcessingModel); err != nil {
		return l, err
	}
	if l.ids, err = core.Xnames("ComponentIDs", req.ComponentIDs); err != nil {
		return l, err
	}
	p := map[string][]string{"partition": req.Partition, "group": req.Group, "type": req.Type, "state": req.State,
		"flag": req.Flag, "enabled": req.Enabled, "softwarestatus": req.Softwarestatus, "role": req.Role,
		"subrole": req.Subrole, "subtype": req.Subtype, "arch": req.Arch, "class": req.Class, "nid": req.NID}
	if err := l.f.Set(p, v.Get()); err != nil {
		return l, err
	}
	if needSelector && l.all() {
		return l, problem.Invalidf("ComponentIDs: give component IDs or at least one filter")
	}
	return l, nil
}

// lockTargets returns, in ID order, the components l selects as the
// in-memory indexes have them (nil when l selects everything), and the
// ComponentIDs that are not components, in request order.
func (s *Store) lockTargets(l glLockSelection) (targets, missing []string) {
	if l.all() {
		return nil, nil
	}
	if len(l.ids) == 0 {
		s.core.Matching(l.f, func(r *core.Record) { targets = append(targets, r.ID) })
		return targets, nil
	}
	f := l.f
	s.core.WithGroups(&f, func([]*core.Record) {
		for _, id := range l.ids {
			switch r := s.ix.ByID[id]; {
			case r == nil:
				missing = append(missing, id)
			case f.Match(r):
				targets = append(targets, id)
			}
		}
	})
	slices.Sort(targets)
	return targets, missing
}

// glLockRows reads the lock state of targets (of every component when
// targets is nil and all is set), ordered by ID, and returns the targets that
// are no longer components. A reservation that expired before now counts as
// absent, whether or not the reaper has deleted it yet.
func glLockRows(ctx context.Context, q core.Queryer, targets []string, all bool, now time.Time) ([]glLockRow, []string, error) {
	base := `SELECT c.id, c.locked, c.reservation_disabled, r.created_at, r.expires_at
		FROM components c
		LEFT JOIN reservations r ON r.component_id = c.id AND (r.expires_at IS NULL OR r.expires_at > ?)`
	chunks := core.Chunks(targets)
	if all {
		chunks = [][]string{nil}
	}
	var out []glLockRow
	var gone []string
	for _, c := range chunks {
		q2, args := base, []any{now.UnixMilli()}
		if c != nil {
			q2 += ` WHERE c.id IN (` + core.Placeholders(len(c)) + `)`
			args = core.Args(args, c)
		}
		rows, err := glScanLockRows(ctx, q, q2+` ORDER BY c.id`, args)
		if err != nil {
			return nil, nil, err
		}
		i := 0
		for _, id := range c { // both sorted: find the targets without a row
			if i < len(rows) && rows[i].id == id {
				i++
				continue
			}
			gone = append(gone, id)
		}
		out = append(out, rows...)
	}
	return out, gone, nil
}

func glScanLockRows(ctx context.Context, q core.Queryer, query string, args []any) ([]glLockRow, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read lock state: %w", err)
	}
	defer rows.Close()
	var out []glLockRow
	for rows.Next() {
		var r glLockRow
		if err := rows.Scan(&r.id, &r.locked, &r.disabled, &r.created, &r.expires); err != nil {
			return nil, fmt.Errorf("read lock state: %w", err)
		}
		r.reserved = r.created.Valid
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read lock state: %w", err)
	}
	return out, nil
}
