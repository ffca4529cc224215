// Package ethernet serves HSM's /Inventory/EthernetInterfaces: the MAC and
// IP addresses of the machine's interfaces, as discovery and DHCP report them.
package ethernet

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// Store is the eth_interfaces and eth_ip_addresses tables.
type Store struct {
	db  *sqldb.DB
	now func() time.Time
	// creates group-commits concurrent POSTs (create.go).
	creates *sqldb.Group[hsm.EthernetInterface]
}

// NewStore returns the Ethernet interfaces kept in db; now stamps LastUpdate.
func NewStore(db *sqldb.DB, now func() time.Time) *Store {
	s := &Store{db: db, now: now}
	s.creates = sqldb.NewGroup(createRound, s.commitCreates)
	return s
}

// filter selects interfaces; each list is OR'd, lists are AND'd.
type filter struct {
	MACAddress, IPAddress, Network, ComponentID, Type []string
	OlderThan, NewerThan                              time.Time
	ignored                                           []string // unknown parameters, ignored as shipped HSM does
}

// ethernetID is HMS's interface ID: the MAC in lower case without separators.
func ethernetID(mac string) (string, error) {
	hw, err := net.ParseMAC(strings.TrimSpace(mac))
	if err != nil {
		clean := strings.ToLower(strings.NewReplacer(":", "", "-", "", ".", "").Replace(mac))
		if len(clean) != 12 || strings.Trim(clean, "0123456789abcdef") != "" {
			return "", problem.Invalidf("MACAddress: %q is not a MAC address", mac)
		}
		return clean, nil
	}
	return strings.ReplaceAll(hw.String(), ":", ""), nil
}

// normEthernet validates ei and fills ID, Type and the normalised fields.
func normEthernet(ei *hsm.EthernetInterface) error {
	id, err := ethernetID(ei.MACAddress)
	if err != nil {
		return err
	}
	if ei.ID != "" && strings.ToLower(ei.ID) != id {
		return problem.Invalidf("ID: %q does not match MACAddress %s", ei.ID, ei.MACAddress)
	}
	ei.ID = id
	ei.MACAddress = strings.ToLower(strings.TrimSpace(ei.MACAddress))
	if err := normComponentID(&ei.ComponentID, &ei.Type); err != nil {
		return err
	}
	return normIPs(ei.IPAddresses)
}

func normComponentID(id, typ *string) error {
	if *id == "" {
		*typ = ""
		return nil
	}
	t := xname.TypeOf(*id)
	if t == xname.TypeInvalid {
		return problem.Invalidf("ComponentID: %q is not a valid xname", *id)
	}
	*id, *typ = xname.Normalize(*id), string(t)
	return nil
}

func normIPs(ips []hsm.IPAddressMapping) error {
	for i, m := range ips {
		if net.ParseIP(m.IPAddress) == nil {
			return problem.Invalidf("IPAddresses[%d].IPAddress: %q is not an IP address", i, m.IPAddress)
		}
	}
	return nil
}

// Claim stores what a Redfish walk found of an interface in one
// transaction: a new MAC is created with ei's addresses; an existing one (an
// unknown MAC DHCP wrote, ComponentID empty) is pointed at ei's component,
// and given ei's description when it has none; one already named is left
// as it is. A read then a separate
// create lost to a DHCP write landing between them and left the interface
// unnamed for good (the node lost in the 1,000-node boot storm).
func (s *Store) Claim(ctx context.Context, ei hsm.EthernetInterface) error {
	return s.db.GroupTx(ctx, func(tx *sql.Tx) error { return s.ClaimTx(ctx, tx, ei) })
}

// ClaimTx is Claim inside tx, for a walk that stores all it found in one
// transaction.
func (s *Store) ClaimTx(ctx context.Context, tx *sql.Tx, ei hsm.EthernetInterface) error {
	if err := normEthernet(&ei); err != nil {
		return err
	}
	now := s.now().UTC().Format(core.TSFormat)
	var cid, desc string
	err := tx.QueryRowContext(ctx, `SELECT component_id, description FROM eth_interfaces WHERE id = ?`, ei.ID).Scan(&cid, &desc)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `INSERT INTO eth_interfaces (id, description, mac_address, last_update, component_id, type)
			VALUES (?, ?, ?, ?, ?, ?)`, ei.ID, ei.Description, ei.MACAddress, now, ei.ComponentID, ei.Type); err != nil {
			return fmt.Errorf("store ethernet interface %s: %w", ei.ID, err)
		}
		return putIPs(ctx, tx, ei.ID, ei.IPAddresses)
	case err != nil:
		return fmt.Errorf("read ethernet interface %s: %w", ei.ID, err)
	case cid != "":
		// Named already (by this walk before, an administrator or the
		// nodes daemon): a walk does not re-point it.
		return nil
	}
	if desc == "" {
		desc = ei.Description
	}
	if _, err := tx.ExecContext(ctx, `UPDATE eth_interfaces SET component_id = ?, type = ?, description = ?, last_update = ? WHERE id = ?`,
		ei.ComponentID, ei.Type, desc, now, ei.ID); err != nil {
		return fmt.Errorf("update ethernet interface %s: %w", ei.ID, err)
	}
	return nil
}

func putIPs(ctx context.Context, tx *sql.Tx, id string, ips []hsm.IPAddressMapping) error {
	for i, m := range ips {
		_, err := tx.ExecContext(ctx, `INSERT INTO eth_ip_addresses (eth_id, ip_address, network) VALUES (?, ?, ?)`, id, m.IPAddress, m.Network)
		if sqldb.IsUniqueViolation(err) {
			return problem.Conflictf("IPAddresses[%d].IPAddress: %s is listed twice", i, m.IPAddress)
		}
		if err != nil {
			return fmt.Errorf("store ip address %s of %s: %w", m.IPAddress, id, err)
		}
	}
	return nil
}

// EthernetInterfaces returns the interfaces f selects, by ID.
func (s *Store) list(ctx context.Context, f filter) ([]hsm.EthernetInterface, error) {
	var where []string
	var args []any
	in := func(expr string, vals []string, norm func(string) string) {
		if len(vals) == 0 {
			return
		}
		ph := strings.TrimSuffix(strings.Repeat("?, ", len(vals)), ", ")
		where = append(where, strings.Replace(expr, "?", ph, 1))
		for _, v := range vals {
			args = append(args, norm(v))
		}
	}
	macID := func(v string) string { id, _ := ethernetID(v); return id }
	in("e.id IN (?)", f.MACAddress, macID)
	in("e.component_id IN (?)", f.ComponentID, xname.Normalize)
	in("e.type IN (?)", f.Type, func(v string) string { t, _ := xname.ParseType(v); return string(t) })
	in("e.id IN (SELECT eth_id FROM eth_ip_addresses WHERE ip_address IN (?))", f.IPAddress, strings.TrimSpace)
	in("e.id IN (SELECT eth_id FROM eth_ip_addresses WHERE network IN (?))", f.Network, strings.TrimSpace)
	if !f.OlderThan.IsZero() {
		where, args = append(where, "e.last_update < ?"), append(args, f.OlderThan.UTC().Format(core.TSFormat))
	}
	if !f.NewerThan.IsZero() {
		where, args = append(where, "e.last_update > ?"), append(args, f.NewerThan.UTC().Format(core.TSFormat))
	}
	q := `SELECT e.id, e.description, e.mac_address, e.last_update, e.component_id, e.type FROM eth_interfaces e`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	return s.query(ctx, q+" ORDER BY e.id", args...)
}

// querier runs a query: the database's reader statements (sqldb.DB.Query)
// or a transaction's QueryContext.
type querier func(ctx context.Context, q string, args ...any) (*sql.Rows, error)

const selectIPs = `SELECT eth_id, ip_address, network FROM eth_ip_addresses`

func (s *Store) query(ctx context.Context, q string, args ...any) ([]hsm.EthernetInterface, error) {
	return queryWith(ctx, s.db.Query, q, args...)
}

// maxIPLookup is the most interfaces whose IP addresses queryWith reads by
// key; for more it reads the whole address table once.
const maxIPLookup = 256

// queryWith reads the interfaces q selects, then their addresses: those of
// the interfaces found when they are few (a GET or PATCH of one, bss's and
// reds' lookups by MAC or component: reading every interface's addresses
// for each of those was a quarter of the suite's CPU in the 1,000-node boot
// storm), else the whole table's at once.
func queryWith(ctx context.Context, run querier, q string, args ...any) ([]hsm.EthernetInterface, error) {
	rows, err := run(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read ethernet interfaces: %w", err)
	}
	out := []hsm.EthernetInterface{}
	byID := map[string]int{}
	for rows.Next() {
		var ei hsm.EthernetInterface
		var ts string
		if err := rows.Scan(&ei.ID, &ei.Description, &ei.MACAddress, &ts, &ei.ComponentID, &ei.Type); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read ethernet interfaces: %w", err)
		}
		ei.LastUpdate, _ = time.Parse(core.TSFormat, ts)
		ei.IPAddresses = []hsm.IPAddressMapping{}
		byID[ei.ID] = len(out)
		out = append(out, ei)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(out) == 0 {
		return out, err
	}
	var ips *sql.Rows
	switch {
	case len(out) == 1:
		ips, err = run(ctx, selectIPs+` WHERE eth_id = ? ORDER BY ip_address`, out[0].ID)
	case len(out) <= maxIPLookup:
		ids := make([]any, len(out))
		for i, ei := range out {
			ids[i] = ei.ID
		}
		ips, err = run(ctx, selectIPs+` WHERE eth_id IN `+sqldb.Placeholders(1, len(ids))+` ORDER BY eth_id, ip_address`, ids...)
	default:
		ips, err = run(ctx, selectIPs+` ORDER BY eth_id, ip_address`)
	}
	if err != nil {
		return nil, fmt.Errorf("read ip addresses: %w", err)
	}
	defer ips.Close()
	for ips.Next() {
		var id string
		var m hsm.IPAddressMapping
		if err := ips.Scan(&id, &m.IPAddress, &m.Network); err != nil {
			return nil, fmt.Errorf("read ip addresses: %w", err)
		}
		if i, ok := byID[id]; ok {
			out[i].IPAddresses = append(out[i].IPAddresses, m)
		}
	}
	return out, ips.Err()
}

const selectOne = `SELECT id, description, mac_address, last_update, component_id, type FROM eth_interfaces e WHERE e.id = ?`

// Get returns the interface with the given ID (or MAC).
func (s *Store) Get(ctx context.Context, id string) (hsm.EthernetInterface, error) {
	return getWith(ctx, s.db.Query, id)
}

func getWith(ctx context.Context, run querier, id string) (hsm.EthernetInterface, error) {
	nid, err := ethernetID(id)
	if err != nil {
		return hsm.EthernetInterface{}, problem.NotFoundf("ethernet interface %q: none", id)
	}
	out, err := queryWith(ctx, run, selectOne, nid)
	if err != nil {
		return hsm.EthernetInterface{}, err
	}
	if len(out) == 0 {
		return hsm.EthernetInterface{}, problem.NotFoundf("ethernet interface %s: none", nid)
	}
	return out[0], nil
}

// Patch applies p to interface id and returns the result.
// Changing the IP addresses refreshes LastUpdate. The interface is read in
// the transaction that writes it: read before, a concurrent PATCH of
// another field landing in between was undone.
func (s *Store) Patch(ctx context.Context, id string, p hsm.EthernetPatch) (hsm.EthernetInterface, error) {
	var ei hsm.EthernetInterface
	err := s.db.GroupTx(ctx, func(tx *sql.Tx) error {
		var err error
		if ei, err = getWith(ctx, tx.QueryContext, id); err != nil {
			return err
		}
		if err := patch(&ei, p, s.now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE eth_interfaces SET description = ?, component_id = ?, type = ?, last_update = ?
			WHERE id = ?`, ei.Description, ei.ComponentID, ei.Type, ei.LastUpdate.Format(core.TSFormat), ei.ID); err != nil {
			return fmt.Errorf("update ethernet interface %s: %w", ei.ID, err)
		}
		if p.IPAddresses == nil {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM eth_ip_addresses WHERE eth_id = ?`, ei.ID); err != nil {
			return fmt.Errorf("update ip addresses of %s: %w", ei.ID, err)
		}
		return putIPs(ctx, tx, ei.ID, ei.IPAddresses)
	})
	return ei, err
}

// patch applies p to ei.
func patch(ei *hsm.EthernetInterface, p hsm.EthernetPatch, now func() time.Time) error {
	if p.Description != nil {
		ei.Description = *p.Description
	}
	if p.ComponentID != nil {
		ei.ComponentID = *p.ComponentID
		if err := normComponentID(&ei.ComponentID, &ei.Type); err != nil {
			return err
		}
	}
	if p.IPAddresses != nil {
		if err := normIPs(*p.IPAddresses); err != nil {
			return err
		}
		ei.IPAddresses, ei.LastUpdate = *p.IPAddresses, now().UTC()
	}
	return nil
}

// DeleteEthernetInterface deletes interface id, or all when id is "".
func (s *Store) delete(ctx context.Context, id string) (int64, error) {
	q, args := `DELETE FROM eth_interfaces`, []any{}
	if id != "" {
		nid, err := ethernetID(id)
		if err != nil {
			return 0, problem.NotFoundf("ethernet interface %q: none", id)
		}
		q, args = q+` WHERE id = ?`, []any{nid}
	}
	var n int64
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("delete ethernet interfaces: %w", err)
		}
		n, _ = res.RowsAffected()
		return nil
	})
	if err == nil && n == 0 {
		return 0, problem.NotFoundf("ethernet interface %s: none", id)
	}
	return n, err
}

// SetEthernetIP adds (add=true, ErrConflict if present) or updates the
// network of (add=false, ErrNotFound if absent) one IP address of interface id.
func (s *Store) setIP(ctx context.Context, id string, m hsm.IPAddressMapping, add bool) error {
	ei, err := s.idOf(id)
	if err != nil {
		return err
	}
	if err := normIPs([]hsm.IPAddressMapping{m}); err != nil {
		return err
	}
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		if err := s.mustExist(ctx, tx, ei.ID); err != nil {
			return err
		}
		q := `UPDATE eth_ip_addresses SET network = ? WHERE eth_id = ? AND ip_address = ?`
		args := []any{m.Network, ei.ID, m.IPAddress}
		if add {
			q = `INSERT INTO eth_ip_addresses (network, eth_id, ip_address) VALUES (?, ?, ?)`
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if sqldb.IsUniqueViolation(err) {
			return problem.Conflictf("IPAddress: %s is already an address of %s", m.IPAddress, ei.ID)
		}
		if err != nil {
			return fmt.Errorf("store ip address %s of %s: %w", m.IPAddress, ei.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return problem.NotFoundf("ip address %s of %s: none", m.IPAddress, ei.ID)
		}
		return touchEthernet(ctx, tx, ei.ID, s.now())
	})
}

// DeleteEthernetIP removes one IP address of interface id.
func (s *Store) deleteIP(ctx context.Context, id, ip string) error {
	ei, err := s.idOf(id)
	if err != nil {
		return err
	}
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		if err := s.mustExist(ctx, tx, ei.ID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM eth_ip_addresses WHERE eth_id = ? AND ip_address = ?`, ei.ID, ip)
		if err != nil {
			return fmt.Errorf("delete ip address %s of %s: %w", ip, ei.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return problem.NotFoundf("ip address %s of %s: none", ip, ei.ID)
		}
		return touchEthernet(ctx, tx, ei.ID, s.now())
	})
}

// idOf is the interface of ID (or MAC) id, by its normalised ID only.
func (s *Store) idOf(id string) (hsm.EthernetInterface, error) {
	nid, err := ethernetID(id)
	if err != nil {
		return hsm.EthernetInterface{}, problem.NotFoundf("ethernet interface %q: none", id)
	}
	return hsm.EthernetInterface{ID: nid}, nil
}

// mustExist is ErrNotFound unless interface id is stored; run in the
// transaction that writes it, so a delete cannot land in between.
func (s *Store) mustExist(ctx context.Context, tx *sql.Tx, id string) error {
	ok, err := s.stored(ctx, tx, id)
	if err == nil && !ok {
		err = problem.NotFoundf("ethernet interface %s: none", id)
	}
	return err
}

func touchEthernet(ctx context.Context, tx *sql.Tx, id string, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `UPDATE eth_interfaces SET last_update = ? WHERE id = ?`, now.UTC().Format(core.TSFormat), id); err != nil {
		return fmt.Errorf("update ethernet interface %s: %w", id, err)
	}
	return nil
}

// parseFilter parses the GET /Inventory/EthernetInterfaces query.
func parseFilter(q url.Values) (filter, error) {
	var f filter
	for k, vs := range q {
		var err error
		switch strings.ToLower(k) {
		case "macaddress":
			f.MACAddress = append(f.MACAddress, vs...)
		case "ipaddress":
			f.IPAddress = append(f.IPAddress, vs...)
		case "network":
			f.Network = append(f.Network, vs...)
		case "componentid":
			for _, v := range vs { // "" selects unplaced interfaces
				if v != "" && !xname.Valid(v) {
					return f, problem.Invalidf("Invalid CompID.")
				}
			}
			f.ComponentID = append(f.ComponentID, vs...)
		case "type":
			for _, v := range vs {
				if _, ok := xname.ParseType(v); !ok {
					return f, problem.Invalidf("query parameter Type: invalid value %q", v)
				}
			}
			f.Type = append(f.Type, vs...)
		case "olderthan":
			f.OlderThan, err = core.ParseTime("OlderThan", vs[0])
		case "newerthan":
			f.NewerThan, err = core.ParseTime("NewerThan", vs[0])
		default:
			f.ignored = append(f.ignored, k)
		}
		if err != nil {
			return f, err
		}
	}
	return f, nil
}
