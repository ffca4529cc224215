package redfish

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/hmsuite/hms/internal/redact"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"
)

// enclosure is a walked Chassis with its Power resource, if it has one.
type enclosure struct {
	odataID  string
	powerURL string
	power    []hsm.PowerControl
}

// walkService walks Systems, Managers, Chassis and the Redfish services side
// by side, then joins each node with its chassis power data.
func (w *walker) walkService(ctx context.Context, svc *gofish.Service) {
	var nodes []*node
	var encls map[string]*enclosure
	var wg sync.WaitGroup
	wg.Go(func() {
		list, err := svc.Systems()
		nodes = w.nodes(ctx, list, err)
	})
	wg.Go(func() {
		list, err := svc.Chassis()
		encls = w.chassis(ctx, list, err)
	})
	wg.Go(func() {
		list, err := svc.Managers()
		w.managers(ctx, list, err)
	})
	wg.Go(func() { w.services(ctx, svc) })
	wg.Wait()
	for _, n := range nodes {
		if n == nil {
			continue
		}
		for _, l := range n.chassisLinks {
			if e := encls[l]; e != nil && e.powerURL != "" {
				n.ce.RedfishSystemInfo.PowerURL = e.powerURL
				n.ce.RedfishSystemInfo.PowerControl = e.power
				break
			}
		}
		n.parts.ces = append(n.parts.ces, n.ce)
		w.add(n.parts)
	}
}

// managers maps the Manager that is the BMC itself to the endpoint's xname.
// Behind a NodeBMC that is the first Manager of type BMC; behind other
// controllers the first of type EnclosureManager; else the first one.
func (w *walker) managers(ctx context.Context, list []*schemas.Manager, err error) {
	if err != nil {
		w.failErr(ctx, "Managers", err)
	}
	sortByODataID(list, func(m *schemas.Manager) string { return m.ODataID })
	want := schemas.BMCManagerType
	if w.bmcType != xname.NodeBMC {
		want = schemas.EnclosureManagerManagerType
	}
	pick := 0
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].ManagerType == want {
			pick = i
		}
	}
	for i, m := range list {
		if i != pick {
			w.note(&w.res.Skipped, m.ODataID+": only one Manager maps to "+w.bmcID)
			continue
		}
		w.add(w.manager(ctx, m))
	}
}

func (w *walker) manager(ctx context.Context, m *schemas.Manager) parts {
	var p parts
	x, err := parseExtras(m.RawData, "#Manager.Reset")
	if err != nil {
		w.failErr(ctx, m.ODataID, err)
	}
	eths := collect(ctx, w, m.ODataID, "EthernetInterfaces", x.Links["EthernetInterfaces"] != "", m.EthernetInterfaces)
	nics := w.nics(&p, w.bmcID, w.bmcType, eths, false)
	p.comps = append(p.comps, hsm.Component{ID: w.bmcID, Type: string(w.bmcType), State: hsm.StateReady,
		Flag: hsm.FlagOK, Enabled: ptr(true)})
	ce := w.componentEndpoint(w.bmcID, w.bmcType, "Manager", string(m.ManagerType), m.UUID, m.ODataID)
	ce.ComponentEndpointType = hsm.CETypeManager
	ce.MACAddr = firstMAC(nics)
	ce.RedfishManagerInfo = &hsm.ManagerInfo{Name: m.Name, EthernetNICInfo: nics}
	if x.Reset != nil {
		ce.RedfishManagerInfo.Actions = &hsm.ManagerActions{Reset: x.Reset}
	}
	p.ces = append(p.ces, ce)
	if w.bmcType != xname.NodeBMC {
		return p
	}
	loc := hsm.HWInvByLoc{ID: w.bmcID, Type: string(xname.NodeBMC), Ordinal: ordinalOf(w.bmcID),
		Status: fruState(m.Status), HWInventoryByLocationType: "HWInvByLocNodeBMC",
		NodeBMCLocationInfo: &hsm.ManagerLocationInfo{ID: m.ID, Name: m.Name, Description: m.Description,
			DateTime: m.DateTime, DateTimeLocalOffset: m.DateTimeLocalOffset, FirmwareVersion: m.FirmwareVersion}}
	if loc.Status == hsm.StatePopulated {
		loc.PopulatedFRU = &hsm.HWInvByFRU{FRUID: FRUID(xname.NodeBMC, w.bmcID, m.Manufacturer, m.PartNumber, m.SerialNumber),
			Type: string(xname.NodeBMC), HWInventoryByFRUType: "HWInvByFRUNodeBMC",
			NodeBMCFRUInfo: &hsm.ManagerFRUInfo{ManagerType: string(m.ManagerType), Manufacturer: m.Manufacturer,
				SerialNumber: m.SerialNumber, Model: m.Model, PartNumber: m.PartNumber}}
	}
	p.inv = append(p.inv, loc)
	return p
}

// chassis maps the Chassis behind a NodeBMC to NodeEnclosures of its slot
// (xXcCsSeE, ordinals by sorted @odata.id) and fetches their Power resources.
func (w *walker) chassis(ctx context.Context, list []*schemas.Chassis, err error) map[string]*enclosure {
	if err != nil {
		w.failErr(ctx, "Chassis", err)
	}
	sortByODataID(list, func(c *schemas.Chassis) string { return c.ODataID })
	if w.bmcType != xname.NodeBMC {
		for _, c := range list {
			w.note(&w.res.Skipped, c.ODataID+": Chassis are only mapped under a NodeBMC")
		}
		return nil
	}
	out := make(map[string]*enclosure, len(list))
	var mu sync.Mutex
	var wg sync.WaitGroup
	slot := xname.Parent(w.bmcID)
	for i, c := range list {
		wg.Go(func() {
			e, p := w.enclosure(ctx, slot+"e"+strconv.Itoa(i), i, c)
			w.add(p)
			mu.Lock()
			out[c.ODataID] = e
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

func (w *walker) enclosure(ctx context.Context, id string, ord int, c *schemas.Chassis) (*enclosure, parts) {
	var p parts
	x, err := parseExtras(c.RawData, "#Chassis.Reset")
	if err != nil {
		w.failErr(ctx, c.ODataID, err)
	}
	e := &enclosure{odataID: c.ODataID, powerURL: x.Links["Power"]}
	if e.powerURL != "" {
		if e.power, err = fetchPower(c.GetClient(), e.powerURL); err != nil {
			w.optional(ctx, c.ODataID, "Power", err)
			e.powerURL = ""
		}
	}
	t := xname.NodeEnclosure
	p.comps = append(p.comps, hsm.Component{ID: id, Type: string(t), State: powerState(c.PowerState, c.Status),
		Flag: hsm.FlagOK, Enabled: ptr(true)})
	ce := w.componentEndpoint(id, t, "Chassis", string(c.ChassisType), c.UUID, c.ODataID)
	ce.ComponentEndpointType = hsm.CETypeChassis
	ce.RedfishChassisInfo = &hsm.ChassisInfo{Name: c.Name}
	if x.Reset != nil {
		ce.RedfishChassisInfo.Actions = &hsm.ChassisActions{Reset: x.Reset}
	}
	p.ces = append(p.ces, ce)
	loc := hsm.HWInvByLoc{ID: id, Type: string(t), Ordinal: ord, Status: fruState(c.Status),
		HWInventoryByLocationType: "HWInvByLocNodeEnclosure",
		NodeEnclosureLocationInfo: &hsm.ChassisLocationInfo{ID: c.ID, Name: c.Name, Description: c.Description}}
	if loc.Status == hsm.StatePopulated {
		loc.PopulatedFRU = &hsm.HWInvByFRU{FRUID: FRUID(t, id, c.Manufacturer, c.PartNumber, c.SerialNumber),
			Type: string(t), HWInventoryByFRUType: "HWInvByFRUNodeEnclosure",
			NodeEnclosureFRUInfo: &hsm.ChassisFRUInfo{AssetTag: c.AssetTag, ChassisType: string(c.ChassisType),
				Model: c.Model, Manufacturer: c.Manufacturer, PartNumber: c.PartNumber,
				SerialNumber: c.SerialNumber, SKU: c.SKU}}
	}
	p.inv = append(p.inv, loc)
	return e, p
}

// services records the Redfish services HSM lists as ServiceEndpoints.
// A service the root does not link is simply absent; one whose link fails is
// recorded as missing.
func (w *walker) services(ctx context.Context, svc *gofish.Service) {
	all := map[string]func() (*schemas.Entity, error){
		"AccountService": func() (*schemas.Entity, error) {
			v, err := svc.AccountService()
			if v == nil || err != nil {
				return nil, err
			}
			return &v.Entity, nil
		},
		"SessionService": func() (*schemas.Entity, error) {
			v, err := svc.SessionService()
			if v == nil || err != nil {
				return nil, err
			}
			return &v.Entity, nil
		},
		"EventService": func() (*schemas.Entity, error) {
			v, err := svc.EventService()
			if v == nil || err != nil {
				return nil, err
			}
			return &v.Entity, nil
		},
		"TaskService": func() (*schemas.Entity, error) {
			v, err := svc.Tasks()
			if v == nil || err != nil {
				return nil, err
			}
			return &v.Entity, nil
		},
		"UpdateService": func() (*schemas.Entity, error) {
			v, err := svc.UpdateService()
			if v == nil || err != nil {
				return nil, err
			}
			return &v.Entity, nil
		},
	}
	var wg sync.WaitGroup
	for rt, get := range all {
		wg.Go(func() {
			e, err := get()
			if err != nil {
				w.optional(ctx, serviceRoot, rt, err)
				return
			}
			if e == nil {
				return
			}
			w.add(parts{}, hsm.ServiceEndpoint{RedfishEndpointID: w.bmcID, RedfishType: rt, OdataID: e.ODataID,
				RedfishEndpointFQDN: w.fqdn, RedfishURL: w.fqdn + e.ODataID, ServiceInfo: hsm.ServiceInfo{Name: e.Name}})
		})
	}
	wg.Wait()
}

// serviceRoot is the @odata.id of every Redfish service root.
const serviceRoot = "/redfish/v1"

// fetchPower GETs a chassis Power resource and decodes it with parsePower.
func fetchPower(c schemas.Client, url string) ([]hsm.PowerControl, error) {
	resp, err := c.Get(url)
	if resp != nil {
		defer resp.Body.Close()
	}
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", redact.URL(url), err)
	}
	return parsePower(b)
}
