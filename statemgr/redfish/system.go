package redfish

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/stmcginnis/gofish/schemas"
)

// parts is a batch of records one piece of the walk produced.
type parts struct {
	comps []hsm.Component
	ces   []hsm.ComponentEndpoint
	inv   []hsm.HWInvByLoc
	eths  []hsm.EthernetInterface
}

func (p *parts) merge(q parts) {
	p.comps = append(p.comps, q.comps...)
	p.ces = append(p.ces, q.ces...)
	p.inv = append(p.inv, q.inv...)
	p.eths = append(p.eths, q.eths...)
}

// node is a walked ComputerSystem waiting for its chassis power data.
type node struct {
	ce           hsm.ComponentEndpoint
	chassisLinks []string
	parts        parts
}

// nodes walks every System and returns them in ordinal order. Systems are
// required: failing to list them fails the walk.
func (w *walker) nodes(ctx context.Context, list []*schemas.ComputerSystem, err error) []*node {
	if err != nil {
		w.failErr(ctx, "Systems", err)
	}
	sortByODataID(list, func(s *schemas.ComputerSystem) string { return s.ODataID })
	if len(list) > 0 && w.bmcType != xname.NodeBMC {
		for _, s := range list {
			w.note(&w.res.Skipped, s.ODataID+": Systems are only mapped under a NodeBMC")
		}
		return nil
	}
	out := make([]*node, len(list))
	var wg sync.WaitGroup
	for i, s := range list {
		id := w.bmcID + "n" + strconv.Itoa(i)
		if !xname.Valid(id) {
			w.fail(StatusChildVerificationFailed, fmt.Sprintf("%s: no valid node xname for ordinal %d", s.ODataID, i))
			continue
		}
		wg.Go(func() { out[i] = w.system(ctx, id, i, s) })
	}
	wg.Wait()
	return out
}

// system walks one ComputerSystem and the resources below it.
func (w *walker) system(ctx context.Context, id string, ord int, s *schemas.ComputerSystem) *node {
	x, err := parseExtras(s.RawData, "#ComputerSystem.Reset")
	if err != nil {
		w.failErr(ctx, s.ODataID, err)
	}
	var procs []*schemas.Processor
	var mems []*schemas.Memory
	var eths []*schemas.EthernetInterface
	var wg sync.WaitGroup
	wg.Go(func() { procs = collect(ctx, w, s.ODataID, "Processors", x.Links["Processors"] != "", s.Processors) })
	wg.Go(func() { mems = collect(ctx, w, s.ODataID, "Memory", x.Links["Memory"] != "", s.Memory) })
	wg.Go(func() {
		eths = collect(ctx, w, s.ODataID, "EthernetInterfaces", x.Links["EthernetInterfaces"] != "", s.EthernetInterfaces)
	})
	wg.Wait()

	n := &node{chassisLinks: x.ChassisLinks}
	arch := w.processors(&n.parts, id, procs)
	w.memory(&n.parts, id, mems)
	nics := w.nics(&n.parts, id, xname.Node, eths, true)

	comp := hsm.Component{ID: id, Type: string(xname.Node), State: powerState(s.PowerState, s.Status),
		Flag: hsm.FlagOK, Enabled: ptr(true), Arch: arch}
	n.parts.comps = append(n.parts.comps, comp)
	n.ce = w.componentEndpoint(id, xname.Node, "ComputerSystem", string(s.SystemType), s.UUID, s.ODataID)
	n.ce.ComponentEndpointType = hsm.CETypeComputerSystem
	n.ce.MACAddr = firstMAC(nics)
	info := &hsm.SystemInfo{Name: s.Name, EthernetNICInfo: nics}
	if x.Reset != nil {
		info.Actions = &hsm.SystemActions{Reset: x.Reset}
	}
	n.ce.RedfishSystemInfo = info
	n.parts.inv = append(n.parts.inv, nodeInventory(id, ord, s))
	return n
}

// collect fetches an optional collection, recording it as missing when the
// link is absent or the GET fails without failing the walk.
func collect[T any](ctx context.Context, w *walker, parent, name string, linked bool, get func() ([]*T, error)) []*T {
	if !linked {
		w.note(&w.res.Missing, parent+": "+name+" (no link)")
		return nil
	}
	list, err := get()
	if err != nil {
		w.optional(ctx, parent, name, err)
	}
	return list
}

func nodeInventory(id string, ord int, s *schemas.ComputerSystem) hsm.HWInvByLoc {
	loc := hsm.HWInvByLoc{ID: id, Type: string(xname.Node), Ordinal: ord, Status: fruState(s.Status),
		HWInventoryByLocationType: "HWInvByLocNode",
		NodeLocationInfo: &hsm.SystemLocationInfo{ID: s.ID, Name: s.Name, Description: s.Description,
			Hostname: s.HostName}}
	if s.ProcessorSummary.Count != nil || s.ProcessorSummary.Model != "" {
		loc.NodeLocationInfo.ProcessorSummary = &hsm.ProcessorSummary{Count: s.ProcessorSummary.Count,
			Model: s.ProcessorSummary.Model}
	}
	if s.MemorySummary.TotalSystemMemoryGiB != nil {
		loc.NodeLocationInfo.MemorySummary = &hsm.MemorySummary{TotalSystemMemoryGiB: s.MemorySummary.TotalSystemMemoryGiB}
	}
	if loc.Status == hsm.StatePopulated {
		loc.PopulatedFRU = &hsm.HWInvByFRU{FRUID: FRUID(xname.Node, id, s.Manufacturer, s.PartNumber, s.SerialNumber),
			Type: string(xname.Node), HWInventoryByFRUType: "HWInvByFRUNode",
			NodeFRUInfo: &hsm.SystemFRUInfo{AssetTag: s.AssetTag, BiosVersion: s.BiosVersion, Model: s.Model,
				Manufacturer: s.Manufacturer, PartNumber: s.PartNumber, SerialNumber: s.SerialNumber,
				SKU: s.SKU, SystemType: string(s.SystemType), UUID: s.UUID}}
	}
	return loc
}

// processors maps CPUs to Processor (pN) and GPUs to NodeAccel (aN) and
// returns the node's Arch, taken from its first CPU.
func (w *walker) processors(p *parts, node string, list []*schemas.Processor) string {
	sortByODataID(list, func(c *schemas.Processor) string { return c.ODataID })
	arch, np, na := "", 0, 0
	for _, c := range list {
		t, letter, ord := xname.Processor, "p", np
		if c.ProcessorType == schemas.GPUProcessorType || c.ProcessorType == schemas.AcceleratorProcessorType {
			t, letter, ord = xname.NodeAccel, "a", na
			na++
		} else {
			np++
			if arch == "" {
				arch = archOf(c)
			}
		}
		id := node + letter + strconv.Itoa(ord)
		st := fruState(c.Status)
		p.comps = append(p.comps, hsm.Component{ID: id, Type: string(t), State: st, Flag: hsm.FlagOK, Enabled: ptr(true)})
		p.inv = append(p.inv, processorInventory(id, t, ord, st, c))
	}
	return arch
}

func processorInventory(id string, t xname.Type, ord int, st string, c *schemas.Processor) hsm.HWInvByLoc {
	li := &hsm.ProcessorLocationInfo{ID: c.ID, Name: c.Name, Description: c.Description, Socket: c.Socket}
	loc := hsm.HWInvByLoc{ID: id, Type: string(t), Ordinal: ord, Status: st,
		HWInventoryByLocationType: "HWInvByLoc" + string(t)}
	if st == hsm.StatePopulated {
		fi := &hsm.ProcessorFRUInfo{InstructionSet: string(c.InstructionSet), Manufacturer: c.Manufacturer,
			MaxSpeedMHz: c.MaxSpeedMHz, Model: c.Model, SerialNumber: c.SerialNumber, PartNumber: c.PartNumber,
			ProcessorArchitecture: string(c.ProcessorArchitecture), ProcessorType: string(c.ProcessorType),
			TotalCores: c.TotalCores, TotalThreads: c.TotalThreads}
		if c.ProcessorID != (schemas.ProcessorID{}) {
			pid := c.ProcessorID
			fi.ProcessorID = &hsm.ProcessorID{EffectiveFamily: pid.EffectiveFamily, EffectiveModel: pid.EffectiveModel,
				IdentificationRegisters: pid.IdentificationRegisters, MicrocodeInfo: pid.MicrocodeInfo,
				Step: pid.Step, VendorID: pid.VendorID}
		}
		loc.PopulatedFRU = &hsm.HWInvByFRU{FRUID: FRUID(t, id, c.Manufacturer, c.PartNumber, c.SerialNumber),
			Type: string(t), HWInventoryByFRUType: "HWInvByFRU" + string(t)}
		if t == xname.NodeAccel {
			loc.PopulatedFRU.NodeAccelFRUInfo = fi
		} else {
			loc.PopulatedFRU.ProcessorFRUInfo = fi
		}
	}
	if t == xname.NodeAccel {
		loc.NodeAccelLocationInfo = li
	} else {
		loc.ProcessorLocationInfo = li
	}
	return loc
}

// memory maps Memory resources to Memory components (dN).
func (w *walker) memory(p *parts, node string, list []*schemas.Memory) {
	sortByODataID(list, func(m *schemas.Memory) string { return m.ODataID })
	for i, m := range list {
		id := node + "d" + strconv.Itoa(i)
		st := fruState(m.Status)
		p.comps = append(p.comps, hsm.Component{ID: id, Type: string(xname.Memory), State: st, Flag: hsm.FlagOK, Enabled: ptr(true)})
		loc := hsm.HWInvByLoc{ID: id, Type: string(xname.Memory), Ordinal: i, Status: st,
			HWInventoryByLocationType: "HWInvByLocMemory",
			MemoryLocationInfo:        &hsm.MemoryLocationInfo{ID: m.ID, Name: m.Name, Description: m.Description}}
		if ml := m.MemoryLocation; ml != (schemas.MemoryLocation{}) {
			loc.MemoryLocationInfo.MemoryLocation = &hsm.MemoryLocation{Socket: ml.Socket,
				MemoryController: ml.MemoryController, Channel: ml.Channel, Slot: ml.Slot}
		}
		if st == hsm.StatePopulated {
			loc.PopulatedFRU = &hsm.HWInvByFRU{FRUID: FRUID(xname.Memory, id, m.Manufacturer, m.PartNumber, m.SerialNumber),
				Type: string(xname.Memory), HWInventoryByFRUType: "HWInvByFRUMemory",
				MemoryFRUInfo: &hsm.MemoryFRUInfo{BaseModuleType: string(m.BaseModuleType), BusWidthBits: m.BusWidthBits,
					CapacityMiB: m.CapacityMiB, DataWidthBits: m.DataWidthBits,
					ErrorCorrection: string(m.ErrorCorrection), Manufacturer: m.Manufacturer,
					MemoryType: string(m.MemoryType), MemoryDeviceType: string(m.MemoryDeviceType),
					OperatingSpeedMhz: m.OperatingSpeedMhz, PartNumber: m.PartNumber, RankCount: m.RankCount,
					SerialNumber: m.SerialNumber}}
		}
		p.inv = append(p.inv, loc)
	}
}
