package inventory

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// rfRow is a stored RedfishEndpoint: the public fields (User and Password
// always empty) and the sealed credentials.
type rfRow struct {
	ep   hsm.RedfishEndpoint
	cred []byte
}

// rfCred is what is sealed in rf_endpoints.cred.
type rfCred struct {
	User     string `json:"User"`
	Password string `json:"Password"`
}

const rfEndpointCols = `id, body, cred`

func rfArgs(row rfRow) ([]any, error) {
	ep := row.ep
	ep.User, ep.Password = "", ""
	body, err := json.Marshal(ep)
	if err != nil {
		return nil, fmt.Errorf("encode redfish endpoint %s: %w", ep.ID, err)
	}
	return []any{ep.Type, ep.FQDN, ep.UUID, strings.ToLower(ep.MACAddr), ep.IPAddress,
		ep.DiscoveryInfo.LastDiscoveryStatus, string(body), row.cred, ep.ID}, nil
}

// insertRFEndpoints stores new endpoints, all or none; an existing ID is ErrConflict.
func (s *Store) insertRFEndpoints(ctx context.Context, rows []rfRow) error {
	return s.db.GroupTx(ctx, func(raw *sql.Tx) error {
		tx := stmtTx{raw, s.db}
		for _, row := range rows {
			if err := checkFQDNFree(ctx, tx, row.ep); err != nil {
				return err
			}
			args, err := rfArgs(row)
			if err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO rf_endpoints (type, fqdn, uuid, mac_addr, ip_address, last_status, body, cred, id)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
			if sqldb.IsUniqueViolation(err) {
				return problem.Conflictf("ID: redfish endpoint %s already exists", row.ep.ID)
			}
			if err != nil {
				return fmt.Errorf("store redfish endpoint %s: %w", row.ep.ID, err)
			}
		}
		return nil
	})
}

// checkFQDNFree refuses ep when another endpoint has its FQDN (ErrConflict,
// with the shipped HSM's words).
func checkFQDNFree(ctx context.Context, tx stmtTx, ep hsm.RedfishEndpoint) error {
	if ep.FQDN == "" {
		return nil
	}
	// An indexed look-up (rf_endpoints_fqdn, migration 0019), which stops
	// at the first other endpoint found.
	var other string
	err := tx.QueryRowContext(ctx, `SELECT id FROM rf_endpoints WHERE fqdn = ? AND id <> ? LIMIT 1`, ep.FQDN, ep.ID).Scan(&other)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("check FQDN of %s: %w", ep.ID, err)
	}
	return problem.Conflictf("operation would conflict with an existing resource that has the same FQDN")
}

// updateRFEndpoint applies edit to endpoint id inside one transaction and
// returns the stored result.
func (s *Store) updateRFEndpoint(ctx context.Context, id string, edit func(*rfRow) error) (rfRow, error) {
	var out rfRow
	err := s.db.GroupTx(ctx, func(raw *sql.Tx) error {
		tx := stmtTx{raw, s.db}
		var err error
		out, err = updateRFEndpointTx(ctx, tx, id, edit)
		return err
	})
	return out, err
}

// updateRFEndpointTx is updateRFEndpoint inside tx.
func updateRFEndpointTx(ctx context.Context, tx stmtTx, id string, edit func(*rfRow) error) (rfRow, error) {
	out, err := rfEndpointRowTx(ctx, tx, id)
	if err != nil {
		return out, err
	}
	if err := edit(&out); err != nil {
		return out, err
	}
	if err := checkFQDNFree(ctx, tx, out.ep); err != nil {
		return out, err
	}
	return out, putRFRowTx(ctx, tx, out)
}

// putRFRowTx writes row over the stored endpoint of its ID; its FQDN must
// be free (checkFQDNFree) or unchanged.
func putRFRowTx(ctx context.Context, tx stmtTx, row rfRow) error {
	args, err := rfArgs(row)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE rf_endpoints SET type = ?, fqdn = ?, uuid = ?, mac_addr = ?, ip_address = ?,
		last_status = ?, body = ?, cred = ? WHERE id = ?`, args...); err != nil {
		return fmt.Errorf("update redfish endpoint %s: %w", row.ep.ID, err)
	}
	return nil
}

// rfEndpointRowTx returns endpoint id as tx sees it (ErrNotFound if none).
func rfEndpointRowTx(ctx context.Context, tx stmtTx, id string) (rfRow, error) {
	rows, err := scanRFRows(tx.QueryContext(ctx, `SELECT `+rfEndpointCols+` FROM rf_endpoints WHERE id = ?`, id))
	if err != nil {
		return rfRow{}, err
	}
	if len(rows) == 0 {
		return rfRow{}, problem.NotFoundf("redfish endpoint %s: none", id)
	}
	return rows[0], nil
}

// rfEndpointRows returns the endpoints f selects, by ID.
func (s *Store) rfEndpointRows(ctx context.Context, f redfishEndpointFilter) ([]rfRow, error) {
	var where []string
	var args []any
	for _, c := range []struct {
		col  string
		vals []string
	}{
		{"id", f.ID}, {"fqdn", f.FQDN}, {"type", f.Type}, {"uuid", f.UUID}, {"mac_addr", f.MACAddr},
		{"ip_address", f.IPAddress}, {"last_status", f.LastStatus},
	} {
		if len(c.vals) == 0 {
			continue
		}
		where = append(where, c.col+" IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(c.vals)), ", ")+")")
		for _, v := range c.vals {
			args = append(args, v)
		}
	}
	q := `SELECT ` + rfEndpointCols + ` FROM rf_endpoints`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	return scanRFRows(s.db.R.QueryContext(ctx, q+" ORDER BY id", args...))
}

// rfEndpointRow returns endpoint id.
func (s *Store) rfEndpointRow(ctx context.Context, id string) (rfRow, error) {
	rows, err := s.rfEndpointRows(ctx, redfishEndpointFilter{ID: []string{id}})
	if err != nil {
		return rfRow{}, err
	}
	if len(rows) == 0 {
		return rfRow{}, problem.NotFoundf("redfish endpoint %s: none", id)
	}
	return rows[0], nil
}

func scanRFRows(rows *sql.Rows, err error) ([]rfRow, error) {
	if err != nil {
		return nil, fmt.Errorf("read redfish endpoints: %w", err)
	}
	defer rows.Close()
	out := []rfRow{}
	for rows.Next() {
		var id, body string
		var row rfRow
		if err := rows.Scan(&id, &body, &row.cred); err != nil {
			return nil, fmt.Errorf("read redfish endpoints: %w", err)
		}
		if err := json.Unmarshal([]byte(body), &row.ep); err != nil {
			return nil, fmt.Errorf("decode redfish endpoint %s: %w", id, err)
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// deleteRFEndpoints deletes endpoint id (all when id is ""), with the
// Component and service endpoints discovered through it. None is ErrNotFound.
func (s *Store) deleteRFEndpoints(ctx context.Context, id string) (int64, error) {
	var n int64
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		where, args := "", []any{}
		if id != "" {
			where, args = " WHERE id = ?", []any{id}
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM rf_endpoints`+where, args...)
		if err != nil {
			return fmt.Errorf("delete redfish endpoints: %w", err)
		}
		n, _ = res.RowsAffected()
		if id != "" {
			where = " WHERE redfish_ep = ?"
		}
		for _, t := range []string{"rf_component_endpoints", "rf_service_endpoints"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+where, args...); err != nil {
				return fmt.Errorf("delete redfish endpoints: %w", err)
			}
		}
		return nil
	})
	if err == nil && n == 0 {
		if id == "" {
			return 0, problem.NotFoundf("redfish endpoints: none")
		}
		return 0, problem.NotFoundf("redfish endpoint %s: none", id)
	}
	return n, err
}
