package ethernet

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// createRound bounds the POSTs one transaction carries.
const createRound = 512

const insertEthernet = `INSERT INTO eth_interfaces (id, description, mac_address, last_update, component_id, type)
	VALUES (?, ?, ?, ?, ?, ?)`

const insertIP = `INSERT INTO eth_ip_addresses (eth_id, ip_address, network) VALUES (?, ?, ?)`

// Create stores ei; an existing ID is ErrConflict. Concurrent creates are
// group-committed: a client that registers many interfaces at once (`hms
// apply`, discovery) pays one fsync per round, not per interface.
func (s *Store) Create(ctx context.Context, ei hsm.EthernetInterface) (hsm.EthernetInterface, error) {
	if err := normEthernet(&ei); err != nil {
		return ei, err
	}
	if err := twice(ei.IPAddresses); err != nil {
		return ei, err
	}
	ei.LastUpdate = s.now().UTC()
	return ei, s.creates.Do(ctx, ei)
}

// CreateAll stores every interface of eis in one transaction, all or
// nothing: the bulk extension (POST /Inventory/EthernetInterfaces/Bulk).
// A MAC stored, or listed twice, is ErrConflict naming its index.
func (s *Store) CreateAll(ctx context.Context, eis []hsm.EthernetInterface) error {
	now := s.now().UTC()
	index := make(map[string]int, len(eis))
	for i := range eis {
		ei := &eis[i]
		if err := normEthernet(ei); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
		if err := twice(ei.IPAddresses); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
		if j, ok := index[ei.ID]; ok {
			return problem.Conflictf("[%d].MACAddress: interface %s is also [%d]", i, ei.ID, j)
		}
		index[ei.ID], ei.LastUpdate = i, now
	}
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		for i, ei := range eis {
			exists, err := s.stored(ctx, tx, ei.ID)
			if err != nil {
				return err
			}
			if exists {
				return problem.Conflictf("[%d].MACAddress: interface %s already exists", i, ei.ID)
			}
			if err := s.insert(ctx, tx, ei); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return nil
	})
}

// twice refuses an address listed twice.
func twice(ips []hsm.IPAddressMapping) error {
	for i, m := range ips {
		for _, o := range ips[:i] {
			if o.IPAddress == m.IPAddress {
				return problem.Conflictf("IPAddresses[%d].IPAddress: %s is listed twice", i, m.IPAddress)
			}
		}
	}
	return nil
}

// commitCreates stores a round of creates in one transaction, each in its
// own savepoint (sqldb.WriteEach): one that fails, an ID stored already or
// taken by an earlier create of the round among them, is rolled back and
// refused alone while the rest commit together. (A failed round used to
// be retried one transaction per create.)
func (s *Store) commitCreates(ctx context.Context, eis []hsm.EthernetInterface) []error {
	fns := make([]func(*sql.Tx) error, len(eis))
	for i, ei := range eis {
		fns[i] = func(tx *sql.Tx) error {
			exists, err := s.stored(ctx, tx, ei.ID)
			if err != nil {
				return err
			}
			if exists {
				return conflict(ei.ID)
			}
			return s.insert(ctx, tx, ei)
		}
	}
	return s.db.WriteEach(ctx, fns, nil)
}

// stored reports whether interface id is stored.
func (s *Store) stored(ctx context.Context, tx *sql.Tx, id string) (bool, error) {
	st, err := s.db.Stmt(ctx, tx, `SELECT COUNT(*) FROM eth_interfaces WHERE id = ?`)
	if err != nil {
		return false, fmt.Errorf("read ethernet interface %s: %w", id, err)
	}
	var n int
	if err := st.QueryRowContext(ctx, id).Scan(&n); err != nil {
		return false, fmt.Errorf("read ethernet interface %s: %w", id, err)
	}
	return n > 0, nil
}

func conflict(id string) error {
	return problem.Conflictf("MACAddress: interface %s already exists", id)
}

// insert stores ei and its addresses with the writer's prepared statements.
func (s *Store) insert(ctx context.Context, tx *sql.Tx, ei hsm.EthernetInterface) error {
	st, err := s.db.Stmt(ctx, tx, insertEthernet)
	if err != nil {
		return fmt.Errorf("store ethernet interface %s: %w", ei.ID, err)
	}
	_, err = st.ExecContext(ctx, ei.ID, ei.Description, ei.MACAddress, ei.LastUpdate.Format(core.TSFormat), ei.ComponentID, ei.Type)
	if sqldb.IsUniqueViolation(err) {
		return conflict(ei.ID)
	}
	if err != nil {
		return fmt.Errorf("store ethernet interface %s: %w", ei.ID, err)
	}
	if len(ei.IPAddresses) == 0 {
		return nil
	}
	ipst, err := s.db.Stmt(ctx, tx, insertIP)
	if err != nil {
		return fmt.Errorf("store ip addresses of %s: %w", ei.ID, err)
	}
	for _, m := range ei.IPAddresses {
		if _, err := ipst.ExecContext(ctx, ei.ID, m.IPAddress, m.Network); err != nil {
			return fmt.Errorf("store ip address %s of %s: %w", m.IPAddress, ei.ID, err)
		}
	}
	return nil
}
