package inventory

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/redfish"
)

// statusStoreFailed is recorded when a walk succeeded but HSM could not store it.
const statusStoreFailed = "StoreFailed"

// discover walks endpoint id and records the outcome.
func (d *Discovery) discover(ctx context.Context, id string) {
	row, err := d.store.rfEndpointRow(ctx, id)
	if err != nil {
		if !errors.Is(err, problem.ErrNotFound) {
			d.log.ErrorContext(ctx, "discovery_read_endpoint_failed", "xname", id, "err", err)
		}
		return
	}
	if row.ep.Enabled != nil && !*row.ep.Enabled {
		return
	}
	start := d.store.now().UTC()
	ep, err := d.endpoint(row)
	if err != nil {
		d.log.ErrorContext(ctx, "discovery_credentials_unreadable", "xname", id, "err", err)
		d.setInfo(ctx, id, hsm.DiscoveryInfo{LastDiscoveryAttempt: &start, LastDiscoveryStatus: string(redfish.StatusVerificationFailed)}, nil)
		return
	}
	d.setInfo(ctx, id, hsm.DiscoveryInfo{LastDiscoveryAttempt: &start, LastDiscoveryStatus: string(redfish.StatusDiscoveryStarted),
		RedfishVersion: row.ep.DiscoveryInfo.RedfishVersion}, nil)
	res, err := redfish.Walk(ctx, ep, redfish.Options{Timeout: d.cfg.Timeout,
		MaxConcurrentRequests: d.cfg.MaxConcurrentRequests, HTTPClient: d.cfg.HTTPClient})
	info := hsm.DiscoveryInfo{LastDiscoveryAttempt: &start, LastDiscoveryStatus: string(res.Status), RedfishVersion: res.RedfishVersion}
	if ctx.Err() != nil {
		return // shutting down: left DiscoveryStarted, so the next Run walks it again
	}
	if err != nil {
		d.log.InfoContext(ctx, "discovery_failed", "xname", id, "status", string(res.Status), "err", err)
		d.setInfo(ctx, id, info, nil)
		return
	}
	if err := d.apply(ctx, &res); err != nil {
		d.log.ErrorContext(ctx, "discovery_store_failed", "xname", id, "err", err)
		info.LastDiscoveryStatus = statusStoreFailed
		d.setInfo(ctx, id, info, nil)
		return
	}
	d.setInfo(ctx, id, info, &res)
}

// setInfo records info (and, after a good walk, the UUID and BMC MAC) on endpoint id.
func (d *Discovery) setInfo(ctx context.Context, id string, info hsm.DiscoveryInfo, res *redfish.Result) {
	if info.LastDiscoveryStatus != string(redfish.StatusDiscoveryStarted) {
		d.walks.WithLabelValues(info.LastDiscoveryStatus).Inc()
		if info.LastDiscoveryAttempt != nil {
			d.walkTime.Observe(d.store.now().Sub(*info.LastDiscoveryAttempt).Seconds())
		}
	}
	_, err := d.store.updateRFEndpoint(ctx, id, func(row *rfRow) error {
		row.ep.DiscoveryInfo = info
		if res == nil {
			return nil
		}
		if res.UUID != "" {
			row.ep.UUID = res.UUID
		}
		if row.ep.MACAddr == "" {
			row.ep.MACAddr = bmcMAC(res, id)
		}
		return nil
	})
	if err != nil && !errors.Is(err, problem.ErrNotFound) {
		d.log.ErrorContext(ctx, "discovery_status_store_failed", "xname", id, "err", err)
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
// as POST /State/Components (so the index and the SCN outbox follow),
// Ethernet interfaces through the Ethernet store code, then the Redfish
// inventory of the endpoint in one transaction.
func (d *Discovery) apply(ctx context.Context, res *redfish.Result) error {
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
	for _, e := range res.EthernetInterfaces {
		if err := d.storeEthernet(ctx, e); err != nil {
			return err
		}
	}
	return d.store.putInventory(ctx, res)
}

// storeEthernet creates the interface of a discovered MAC, or points an
// existing one (e.g. an unknown MAC DHCP saw) at its component, atomically
// (see ethernet.Store.Claim). Only well-formed addresses are kept.
func (d *Discovery) storeEthernet(ctx context.Context, e hsm.EthernetInterface) error {
	ei := hsm.EthernetInterface{MACAddress: e.MACAddress, Description: e.Description, ComponentID: e.ComponentID,
		IPAddresses: []hsm.IPAddressMapping{}}
	for _, ip := range e.IPAddresses {
		if net.ParseIP(ip.IPAddress) != nil {
			ei.IPAddresses = append(ei.IPAddresses, ip)
		}
	}
	return d.store.eth.Claim(ctx, ei)
}

// putInventory replaces the component endpoints, service endpoints and
// hardware locations of res's endpoint, recording FRU changes in the history.
func (s *Store) putInventory(ctx context.Context, res *redfish.Result) error {
	ep := res.EndpointID
	now := s.now().UTC().Format(core.TSFormat)
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
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
	})
}

// execJSON runs q with args followed by v encoded as JSON.
func execJSON(ctx context.Context, tx *sql.Tx, q string, v any, args ...any) error {
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
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
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

// unqueueDiscovery records that the walk of endpoint id has started.
func (s *Store) unqueueDiscovery(ctx context.Context, id string) error {
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM rf_discovery_queue WHERE id = ?`, id); err != nil {
			return fmt.Errorf("unqueue discovery of %s: %w", id, err)
		}
		return nil
	})
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
