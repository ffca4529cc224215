package inventory

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/redfish"
)

// HW inventory history event types.
const (
	HWEventAdded    = "Added"
	HWEventRemoved  = "Removed"
	HWEventScanned  = "Scanned"
	HWEventDetected = "Detected"
)

// putHardware replaces the hardware locations of endpoint ep with those of
// res, stored as storeHW stores them.
func putHardware(ctx context.Context, tx stmtTx, ep string, res *redfish.Result, now string) error {
	old := map[string]string{}
	rows, err := tx.QueryContext(ctx, `SELECT id, fru_id FROM rf_hw_locations WHERE redfish_ep = ?`, ep)
	if err != nil {
		return fmt.Errorf("read hardware of %s: %w", ep, err)
	}
	for rows.Next() {
		var id, fru string
		if err := rows.Scan(&id, &fru); err != nil {
			rows.Close()
			return fmt.Errorf("read hardware of %s: %w", ep, err)
		}
		old[id] = fru
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read hardware of %s: %w", ep, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM rf_hw_locations WHERE redfish_ep = ?`, ep); err != nil {
		return fmt.Errorf("replace hardware of %s: %w", ep, err)
	}
	locs := make([]hwRow, 0, len(res.HWInventory))
	for i := range res.HWInventory {
		loc := &res.HWInventory[i]
		r := hwRow{id: loc.ID, typ: loc.Type, ep: ep, loc: loc}
		if f := loc.PopulatedFRU; f != nil {
			r.fru, r.fruID, r.fruType = f, f.FRUID, f.Type
		}
		r.manu, r.pn, r.sn = fruIdent(loc.PopulatedFRU)
		locs = append(locs, r)
	}
	return storeHW(ctx, tx, locs, old, now)
}

// hwRow is one hardware location to store: its wire body, the columns the
// filters read and, when populated, its FRU.
type hwRow struct {
	id, typ, ep    string
	loc            any // wire body of the location
	fru            any // wire body of the FRU; nil when empty
	fruID, fruType string
	manu, pn, sn   string // of the FRU
}

// storeHW upserts locs and their FRUs and records an Added event for every
// location whose FRU is new there and a Removed event for the FRU it
// replaced. old maps the locations the caller has just removed to the FRU
// they held; the previous FRU of any other location is read from the table.
// A row without ep keeps the endpoint its location had ("" for a new one).
func storeHW(ctx context.Context, tx stmtTx, locs []hwRow, old map[string]string, now string) error {
	event := func(id, fru, typ string) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO rf_hw_history (id, fru_id, ts, event_type) VALUES (?, ?, ?, ?)`, id, fru, now, typ)
		if err != nil {
			return fmt.Errorf("store hardware history of %s: %w", id, err)
		}
		return nil
	}
	for _, loc := range locs {
		prev, seen := old[loc.id]
		if !seen {
			var ep string
			err := tx.QueryRowContext(ctx, `SELECT fru_id, redfish_ep FROM rf_hw_locations WHERE id = ?`, loc.id).Scan(&prev, &ep)
			switch {
			case err == nil:
				seen = true
				if loc.ep == "" {
					loc.ep = ep
				}
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("read hardware location %s: %w", loc.id, err)
			}
		}
		if loc.fru != nil {
			if err := execJSON(ctx, tx, `INSERT INTO rf_hw_frus (fru_id, type, manufacturer, part_number, serial_number, body) VALUES (?, ?, ?, ?, ?, ?)
				ON CONFLICT (fru_id) DO UPDATE SET type = excluded.type, manufacturer = excluded.manufacturer,
				part_number = excluded.part_number, serial_number = excluded.serial_number, body = excluded.body`,
				loc.fru, loc.fruID, loc.fruType, loc.manu, loc.pn, loc.sn); err != nil {
				return err
			}
		}
		if err := execJSON(ctx, tx, `INSERT INTO rf_hw_locations (id, type, redfish_ep, fru_id, manufacturer, part_number, serial_number, body)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET type = excluded.type, redfish_ep = excluded.redfish_ep, fru_id = excluded.fru_id,
			manufacturer = excluded.manufacturer, part_number = excluded.part_number, serial_number = excluded.serial_number, body = excluded.body`,
			loc.loc, loc.id, loc.typ, loc.ep, loc.fruID, loc.manu, loc.pn, loc.sn); err != nil {
			return err
		}
		if seen && prev == loc.fruID {
			continue
		}
		if seen && prev != "" {
			if err := event(loc.id, prev, HWEventRemoved); err != nil {
				return err
			}
		}
		if loc.fruID != "" {
			if err := event(loc.id, loc.fruID, HWEventAdded); err != nil {
				return err
			}
		}
	}
	return nil
}

// postHardware creates or updates locs as a walk stores its hardware, in
// one transaction.
func (s *Store) postHardware(ctx context.Context, locs []hwRow) error {
	now := s.now().UTC().Format(core.TSFormat)
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error { return storeHW(ctx, stmtTx{tx, s.db}, locs, nil, now) })
}

// hwHistory returns the history grouped by key (id or fru_id), restricted by
// conds and to events from..to (stored timestamps, inclusive, "" for open),
// each group in event order.
func (s *Store) hwHistory(ctx context.Context, key string, conds [][2]any, from, to string) ([]hsm.HWHistoryArray, error) {
	where, args := inClauses(conds)
	if from != "" {
		where, args = append(where, "ts >= ?"), append(args, from)
	}
	if to != "" {
		where, args = append(where, "ts <= ?"), append(args, to)
	}
	rows, err := s.db.R.QueryContext(ctx, `SELECT id, fru_id, ts, event_type FROM rf_hw_history`+sqlWhere(where)+` ORDER BY `+key+`, seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("read hardware history: %w", err)
	}
	defer rows.Close()
	out := []hsm.HWHistoryArray{}
	for rows.Next() {
		var h hsm.HWHistory
		var ts string
		if err := rows.Scan(&h.ID, &h.FRUID, &ts, &h.EventType); err != nil {
			return nil, fmt.Errorf("read hardware history: %w", err)
		}
		h.Timestamp, _ = time.Parse(core.TSFormat, ts)
		k := h.ID
		if key == "fru_id" {
			k = h.FRUID
		}
		if len(out) == 0 || out[len(out)-1].ID != k {
			out = append(out, hsm.HWHistoryArray{ID: k})
		}
		out[len(out)-1].History = append(out[len(out)-1].History, h)
	}
	return out, rows.Err()
}

// hwHistoryOf returns the history of one location or FRU (key is the
// column, val its value). One without events, or whose events the filters
// exclude, has an empty History: the shipped HSM answers 200 even for an
// xname it never saw.
func (s *Store) hwHistoryOf(ctx context.Context, key, val string, conds [][2]any, from, to string) (hsm.HWHistoryArray, error) {
	out, err := s.hwHistory(ctx, key, append(conds, [2]any{key, []string{val}}), from, to)
	if err != nil || len(out) == 0 {
		return hsm.HWHistoryArray{ID: val, History: []hsm.HWHistory{}}, err
	}
	return out[0], nil
}

// deleteRows deletes the rows of table matching conds (all rows when none).
func (s *Store) deleteRows(ctx context.Context, table string, conds [][2]any) (int64, error) {
	where, args := inClauses(conds)
	var n int64
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM `+table+sqlWhere(where), args...)
		if err != nil {
			return fmt.Errorf("delete from %s: %w", table, err)
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return n, err
}

// deleteFRUs deletes the FRU fruid, or every FRU when fruid is "". If a
// location still holds one of them nothing is deleted (ErrConflict naming
// the location): HSM refuses rather than leave the location pointing at a
// FRU it no longer knows.
func (s *Store) deleteFRUs(ctx context.Context, fruid string) (int64, error) {
	var cond string
	var args []any
	if fruid != "" {
		cond, args = ` WHERE fru_id = ?`, []any{fruid}
	}
	var n int64
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		var loc, fru string
		err := tx.QueryRowContext(ctx, `SELECT id, fru_id FROM rf_hw_locations
			WHERE fru_id IN (SELECT fru_id FROM rf_hw_frus`+cond+`) ORDER BY id LIMIT 1`, args...).Scan(&loc, &fru)
		switch {
		case err == nil:
			return problem.Conflictf("FRU %s: still at location %s", fru, loc)
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("read locations of FRUs: %w", err)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM rf_hw_frus`+cond, args...)
		if err != nil {
			return fmt.Errorf("delete FRUs: %w", err)
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return n, err
}

// inClauses returns an SQL condition per (column, values) pair of conds that
// has values - column IN (values) - and their arguments.
func inClauses(conds [][2]any) ([]string, []any) {
	var where []string
	var args []any
	for _, c := range conds {
		vals := c[1].([]string)
		if len(vals) == 0 {
			continue
		}
		where = append(where, c[0].(string)+" IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(vals)), ", ")+")")
		for _, v := range vals {
			args = append(args, v)
		}
	}
	return where, args
}

// sqlWhere ANDs the conditions into a WHERE clause, "" when there are none.
func sqlWhere(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// fruIdent returns the manufacturer, part number and serial number of f,
// from whichever FRU info it carries.
func fruIdent(f *hsm.HWInvByFRU) (manu, pn, sn string) {
	switch {
	case f == nil:
	case f.NodeFRUInfo != nil:
		return f.NodeFRUInfo.Manufacturer, f.NodeFRUInfo.PartNumber, f.NodeFRUInfo.SerialNumber
	case f.ProcessorFRUInfo != nil:
		return f.ProcessorFRUInfo.Manufacturer, f.ProcessorFRUInfo.PartNumber, f.ProcessorFRUInfo.SerialNumber
	case f.NodeAccelFRUInfo != nil:
		return f.NodeAccelFRUInfo.Manufacturer, f.NodeAccelFRUInfo.PartNumber, f.NodeAccelFRUInfo.SerialNumber
	case f.MemoryFRUInfo != nil:
		return f.MemoryFRUInfo.Manufacturer, f.MemoryFRUInfo.PartNumber, f.MemoryFRUInfo.SerialNumber
	case f.NodeBMCFRUInfo != nil:
		return f.NodeBMCFRUInfo.Manufacturer, f.NodeBMCFRUInfo.PartNumber, f.NodeBMCFRUInfo.SerialNumber
	case f.NodeEnclosureFRUInfo != nil:
		return f.NodeEnclosureFRUInfo.Manufacturer, f.NodeEnclosureFRUInfo.PartNumber, f.NodeEnclosureFRUInfo.SerialNumber
	}
	return "", "", ""
}

// hwLoc is a stored hardware location: its ID, HMS type and wire body.
type hwLoc struct {
	id, typ string
	body    json.RawMessage
}

// hwQuery selects locations for GET /Inventory/Hardware/Query/{xname}.
type hwQuery struct {
	ignored           []string // unknown parameters, ignored as shipped HSM does
	target            string   // normalised xname, partition, or s0/all/all_comp
	children, parents bool
	partitions        []string // when set, the result is restricted to these partitions
	types             core.Match
}

// hwQueryLocs returns, in ID order, the locations q selects: the target (or
// the members of the target partition, or everything for s0/all), their
// descendants with children, their ancestors with parents; then only those
// in one of q.partitions (a location is in a partition when it or an ancestor is a
// member) and of q.types.
func (s *Store) hwQueryLocs(ctx context.Context, q hwQuery) ([]hwLoc, error) {
	all := q.target == "s0" || q.target == "all" || q.target == "all_comp"
	roots := map[string]bool{q.target: true}
	var narrow []string // the target and its ancestors, when it is one component
	if xname.TypeOf(q.target) == xname.Partition {
		ids, err := s.core.GroupMemberIDs(ctx, q.target, "partition")
		if err != nil {
			return nil, err
		}
		roots = setOf(ids)
	} else if !all {
		narrow = append([]string{q.target}, ancestors(q.target)...)
	}
	above := map[string]bool{} // ancestors of the roots
	if q.parents {
		for r := range roots {
			for _, a := range ancestors(r) {
				above[a] = true
			}
		}
	}
	var part map[string]bool
	if len(q.partitions) > 0 {
		part = map[string]bool{}
	}
	for _, p := range q.partitions {
		ids, err := s.core.GroupMemberIDs(ctx, p, "partition")
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			part[id] = true
		}
	}
	keep := func(l hwLoc) bool {
		up := ancestors(l.id)
		in := all || roots[l.id] || above[l.id] || (q.children && slices.ContainsFunc(up, func(a string) bool { return roots[a] }))
		if part != nil {
			in = in && (part[l.id] || slices.ContainsFunc(up, func(a string) bool { return part[a] }))
		}
		return in && q.types.OK(l.typ, false)
	}
	return s.hwLocs(ctx, narrow, keep)
}

// hwLocs reads the locations keep accepts, in ID order; when near is not
// empty only near[0], its descendants and the other IDs of near are read.
func (s *Store) hwLocs(ctx context.Context, near []string, keep func(hwLoc) bool) ([]hwLoc, error) {
	q, args := `SELECT id, type, body FROM rf_hw_locations`, []any{}
	if len(near) > 0 {
		// IDs are lower-case letters and digits, all below '{'.
		q += ` WHERE (id > ? AND id < ?) OR id IN (` + strings.TrimSuffix(strings.Repeat("?, ", len(near)), ", ") + `)`
		args = append(args, near[0], near[0]+"{")
		for _, id := range near {
			args = append(args, id)
		}
	}
	rows, err := s.db.R.QueryContext(ctx, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("read hardware inventory: %w", err)
	}
	defer rows.Close()
	out := []hwLoc{}
	for rows.Next() {
		var l hwLoc
		var b string
		if err := rows.Scan(&l.id, &l.typ, &b); err != nil {
			return nil, fmt.Errorf("read hardware inventory: %w", err)
		}
		if l.body = json.RawMessage(b); keep(l) {
			out = append(out, l)
		}
	}
	return out, rows.Err()
}

// ancestors returns the xnames above id, nearest first, without s0.
func ancestors(id string) []string {
	var out []string
	for p := xname.Parent(id); p != "" && p != "s0"; p = xname.Parent(p) {
		out = append(out, p)
	}
	return out
}

func setOf(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}
