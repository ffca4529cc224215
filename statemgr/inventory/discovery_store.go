package inventory

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/redfish"
)

// statusStoreFailed is recorded when a walk succeeded but HSM could not store it.
const statusStoreFailed = "StoreFailed"

// discover walks endpoint id and records the outcome. Its writes are three
// commits, whatever the BMC holds: the start (with the walk taken off the
// stored queue), the components (through the component store's group
// commit), and the rest of the outcome; the first and the last are group
// commits too (sqldb.GroupTx), shared with the walks ending alongside.
func (d *Discovery) discover(ctx context.Context, id string) {
	start := d.store.now().UTC()
	ep, walk := d.begin(ctx, id, start)
	if !walk {
		return
	}
	res, err := redfish.Walk(ctx, ep, redfish.Options{Timeout: d.cfg.Timeout,
		MaxConcurrentRequests: d.cfg.MaxConcurrentRequests, HTTPClient: d.cfg.HTTPClient, SessionCache: d.sessions})
	info := hsm.DiscoveryInfo{LastDiscoveryAttempt: &start, LastDiscoveryStatus: string(res.Status), RedfishVersion: res.RedfishVersion}
	if ctx.Err() != nil {
		return // shutting down: left DiscoveryStarted, so the next Run walks it again
	}
	if err != nil {
		d.log.InfoContext(ctx, "discovery_failed", "xname", id, "status", string(res.Status), "err", err)
		d.setInfo(ctx, id, info)
		return
	}
	err = d.apply(ctx, &res, info)
	switch {
	case err == nil:
		d.observe(info)
	case errors.Is(err, problem.ErrNotFound):
		d.log.InfoContext(ctx, "discovery_endpoint_gone", "xname", id) // deleted while walked: nothing to record
	default:
		d.log.ErrorContext(ctx, "discovery_store_failed", "xname", id, "err", err)
		info.LastDiscoveryStatus = statusStoreFailed
		d.setInfo(ctx, id, info)
	}
}

// begin takes endpoint id off the stored queue and, if it is to be walked
// (it exists, is enabled and its credentials open), records DiscoveryStarted
// on it, in one transaction; from then on a restart walks it again. It
// returns how to reach the BMC and whether to walk it.
func (d *Discovery) begin(ctx context.Context, id string, start time.Time) (redfish.Endpoint, bool) {
	var ep redfish.Endpoint
	var walk bool
	var failed *hsm.DiscoveryInfo
	err := d.store.db.GroupTx(ctx, func(raw *sql.Tx) error {
		tx := stmtTx{raw, d.store.db}
		walk, failed = false, nil
		if err := unqueueDiscoveryTx(ctx, tx, id); err != nil {
			return err
		}
		row, err := rfEndpointRowTx(ctx, tx, id)
		if errors.Is(err, problem.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if row.ep.Enabled != nil && !*row.ep.Enabled {
			return nil
		}
		info := hsm.DiscoveryInfo{LastDiscoveryAttempt: &start, LastDiscoveryStatus: string(redfish.StatusDiscoveryStarted),
			RedfishVersion: row.ep.DiscoveryInfo.RedfishVersion}
		if ep, err = d.endpoint(row); err != nil {
			d.log.ErrorContext(ctx, "discovery_credentials_unreadable", "xname", id, "err", err)
			info.LastDiscoveryStatus = string(redfish.StatusVerificationFailed)
			failed = &info
		}
		row.ep.DiscoveryInfo = info
		walk = failed == nil
		return putRFRowTx(ctx, tx, row)
	})
	if err != nil {
		if ctx.Err() == nil {
			d.log.ErrorContext(ctx, "discovery_start_failed", "xname", id, "err", err)
		}
		return ep, false
	}
	if failed != nil {
		d.observe(*failed)
	}
	return ep, walk
}

// setInfo records info on endpoint id.
func (d *Discovery) setInfo(ctx context.Context, id string, info hsm.DiscoveryInfo) {
	err := d.store.db.GroupTx(ctx, func(raw *sql.Tx) error {
		tx := stmtTx{raw, d.store.db}
		_, err := updateRFEndpointTx(ctx, tx, id, func(row *rfRow) error {
			row.ep.DiscoveryInfo = info
			return nil
		})
		return err
	})
	switch {
	case err == nil:
		d.observe(info)
	case !errors.Is(err, problem.ErrNotFound):
		d.log.ErrorContext(ctx, "discovery_status_store_failed", "xname", id, "err", err)
	}
}

// observe counts a walk that ended with info.
func (d *Discovery) observe(info hsm.DiscoveryInfo) {
	d.walks.WithLabelValues(info.LastDiscoveryStatus).Inc()
	if info.LastDiscoveryAttempt != nil {
		d.walkTime.Observe(d.store.now().Sub(*info.LastDiscoveryAttempt).Seconds())
	}
}

// bmcMAC returns the first MAC of the Manager that is the endpoint itself.
func bmcMAC(res *redfish.Result, id string) string {
	for _, ce := range res.ComponentEndpoints {
		if ce.ID != id || ce.RedfishManagerInfo == nil {
			continue
		}
		for _, nic := range ce.RedfishManagerInfo.EthernetNICInfo {
			if hw, err := net.ParseMAC(nic.MACAddress); err == nil {
				return hw.String()
			}
		}
	}
	return ""
}

// apply stores what a good walk found: components through the same path
// as POST /State/Components (so the index and the SCN outbox follow), then,
// in one transaction, the outcome info, UUID and BMC MAC on the endpoint,
// the Ethernet interfaces (through the Ethernet store code) and the Redfish
// inventory of the endpoint. An endpoint deleted meanwhile is ErrNotFound
// and nothing but the components is stored.
func (d *Discovery) apply(ctx context.Context, res *redfish.Result, info hsm.DiscoveryInfo) error {
	comps := make([]hsm.Component, 0, len(res.Components))
	for _, c := range res.Components {
		comps = append(comps, hsm.Component{ID: c.ID, Type: c.Type, State: c.State, Flag: c.Flag, Enabled: c.Enabled,
			NetType: c.NetType, Arch: c.Arch, Class: c.Class})
	}
	if len(comps) > 0 {
		// Discovery sets On, Off, Empty or Populated directly, as HMS does,
		// but leaves a Ready node found On as it is (see upsertDiscovered).
		if err := d.store.comp.UpsertDiscovered(ctx, comps, d.log); err != nil {
			return fmt.Errorf("store discovered components: %w", err)
		}
	}
	id := res.EndpointID
	return d.store.db.GroupTx(ctx, func(raw *sql.Tx) error {
		tx := stmtTx{raw, d.store.db}
		_, err := updateRFEndpointTx(ctx, tx, id, func(row *rfRow) error {
			row.ep.DiscoveryInfo = info
			if res.UUID != "" {
				row.ep.UUID = res.UUID
			}
			if row.ep.MACAddr == "" {
				row.ep.MACAddr = bmcMAC(res, id)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, e := range res.EthernetInterfaces {
			if err := d.storeEthernet(ctx, tx, e); err != nil {
				return err
			}
		}
		return d.store.putInventoryTx(ctx, tx, res)
	})
}

// storeEthernet creates the interface of a discovered MAC, or points an
// existing one (e.g. an unknown MAC DHCP saw) at its component, atomically
// (see ethernet.Store.Claim). Only well-formed addresses are kept.
func (d *Discovery) storeEthernet(ctx context.Context, tx stmtTx, e hsm.EthernetInterface) error {
	ei := hsm.EthernetInterface{MACAddress: e.MACAddress, Description: e.Description, ComponentID: e.ComponentID,
		IPAddresses: []hsm.IPAddressMapping{}}
	for _, ip := range e.IPAddresses {
		if net.ParseIP(ip.IPAddress) != nil {
			ei.IPAddresses = append(ei.IPAddresses, ip)
		}
	}
	return d.store.eth.ClaimTx(ctx, tx.Tx, ei)
}

// putInventoryTx replaces, inside tx, the component endpoints, service
// endpoints and hardware locations of res's endpoint, recording FRU
// changes in the history.
func (s *Store) putInventoryTx(ctx context.Context, tx stmtTx, res *redfish.Result) error {
	ep := res.EndpointID
	now := s.now().UTC().Format(core.TSFormat)
	for _, q := range []string{`DELETE FROM rf_component_endpoints WHERE redfish_ep = ?`, `DELETE FROM rf_service_endpoints WHERE redfish_ep = ?`} {
		if _, err := tx.ExecContext(ctx, q, ep); err != nil {
			return fmt.Errorf("replace inventory of %s: %w", ep, err)
		}
	}
	for _, ce := range res.ComponentEndpoints {
		if err := execJSON(ctx, tx, `INSERT INTO rf_component_endpoints (id, redfish_ep, type, redfish_type, body) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET redfish_ep = excluded.redfish_ep, type = excluded.type, redfish_type = excluded.redfish_type, body = excluded.body`,
			ce, ce.ID, ep, ce.Type, ce.RedfishType); err != nil {
			return err
		}
	}
	for _, se := range res.ServiceEndpoints {
		if err := execJSON(ctx, tx, `INSERT INTO rf_service_endpoints (redfish_ep, redfish_type, body) VALUES (?, ?, ?)`,
			se, ep, se.RedfishType); err != nil {
			return err
		}
	}
	return putHardware(ctx, tx, ep, res, now)
}

// execJSON runs q with args followed by v encoded as JSON.
func execJSON(ctx context.Context, tx stmtTx, q string, v any, args ...any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode inventory: %w", err)
	}
	if _, err := tx.ExecContext(ctx, q, append(args, string(b))...); err != nil {
		return fmt.Errorf("store inventory: %w", err)
	}
	return nil
}

// queueDiscovery records that the endpoints ids (those that exist) wait for
// a walk.
func (s *Store) queueDiscovery(ctx context.Context, ids []string) error {
	return s.db.GroupTx(ctx, func(tx *sql.Tx) error {
		st, err := s.db.Stmt(ctx, tx, `INSERT INTO rf_discovery_queue (id)
			SELECT id FROM rf_endpoints WHERE id = ? ON CONFLICT (id) DO NOTHING`)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := st.ExecContext(ctx, id); err != nil {
				return fmt.Errorf("queue discovery of %s: %w", id, err)
			}
		}
		return nil
	})
}

// unqueueDiscoveryTx takes endpoint id off the stored queue.
func unqueueDiscoveryTx(ctx context.Context, tx stmtTx, id string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM rf_discovery_queue WHERE id = ?`, id); err != nil {
		return fmt.Errorf("unqueue discovery of %s: %w", id, err)
	}
	return nil
}

// discoveryBacklog returns, in ID order, the endpoints a starting HSM must
// walk: queued ones, those whose walk was cut short (DiscoveryStarted) and
// those never walked (NotYetQueried: a kill between storing a new endpoint
// and queueing its walk, found by integration's kill -9 workflow test) that
// asked to be walked (RediscoverOnUpdate, as the POST that stored them
// queues) and are enabled.
func (s *Store) discoveryBacklog(ctx context.Context) ([]string, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT id, '' FROM rf_discovery_queue
		UNION SELECT id, '' FROM rf_endpoints WHERE last_status = ?
		UNION SELECT id, body FROM rf_endpoints WHERE last_status = ? ORDER BY id`,
		string(redfish.StatusDiscoveryStarted), string(redfish.StatusNotYetQueried))
	if err != nil {
		return nil, fmt.Errorf("read discovery backlog: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id, body string
		if err := rows.Scan(&id, &body); err != nil {
			return nil, fmt.Errorf("read discovery backlog: %w", err)
		}
		if body != "" {
			var ep hsm.RedfishEndpoint
			if json.Unmarshal([]byte(body), &ep) != nil || !ep.RediscoverOnUpdate || (ep.Enabled != nil && !*ep.Enabled) {
				continue
			}
		}
		if len(ids) == 0 || ids[len(ids)-1] != id {
			ids = append(ids, id)
		}
	}
	return ids, rows.Err()
}
