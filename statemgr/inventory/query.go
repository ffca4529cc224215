package inventory

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// hwKind says how locations of one HMS type appear in the hardware inventory.
type hwKind struct {
	array  string     // HWInventory array (and array of the nesting parent) holding them
	disc   string     // suffix of HWInventoryByLocationType and HWInventoryByFRUType
	parent xname.Type // type whose location nests them in a Hierarchical inventory
}

// hwKinds are the types HWInventory has an array for, with the array names
// and discriminators the shipped HSM uses (the swagger says NodeBMC,
// RouterBMC, NodeHsnNICs and HSNNIC); read only. Locations of other types are not shown by the Query route and
// not accepted by POST.
var hwKinds = map[xname.Type]hwKind{
	xname.Cabinet:                  {array: "Cabinets", disc: "Cabinet"},
	xname.Chassis:                  {array: "Chassis", disc: "Chassis", parent: xname.Cabinet},
	xname.ComputeModule:            {array: "ComputeModules", disc: "ComputeModule", parent: xname.Chassis},
	xname.RouterModule:             {array: "RouterModules", disc: "RouterModule", parent: xname.Chassis},
	xname.NodeEnclosure:            {array: "NodeEnclosures", disc: "NodeEnclosure", parent: xname.ComputeModule},
	xname.HSNBoard:                 {array: "HSNBoards", disc: "HSNBoard", parent: xname.RouterModule},
	xname.MgmtSwitch:               {array: "MgmtSwitches", disc: "MgmtSwitch"},
	xname.MgmtHLSwitch:             {array: "MgmtHLSwitches", disc: "MgmtHLSwitch"},
	xname.CDUMgmtSwitch:            {array: "CDUMgmtSwitches", disc: "CDUMgmtSwitch"},
	xname.Node:                     {array: "Nodes", disc: "Node"},
	xname.Processor:                {array: "Processors", disc: "Processor", parent: xname.Node},
	xname.NodeAccel:                {array: "NodeAccels", disc: "NodeAccel", parent: xname.Node},
	xname.Drive:                    {array: "Drives", disc: "Drive", parent: xname.Node},
	xname.Memory:                   {array: "Memory", disc: "Memory", parent: xname.Node},
	xname.CabinetPDU:               {array: "CabinetPDUs", disc: "PDU"},
	xname.CabinetPDUOutlet:         {array: "CabinetPDUPowerConnectors", disc: "Outlet", parent: xname.CabinetPDU},
	xname.CabinetPDUPowerConnector: {array: "CabinetPDUPowerConnectors", disc: "Outlet", parent: xname.CabinetPDU},
	xname.CMMRectifier:             {array: "CMMRectifiers", disc: "CMMRectifier"},
	xname.NodeAccelRiser:           {array: "NodeAccelRisers", disc: "NodeAccelRiser", parent: xname.Node},
	xname.NodeHsnNic:               {array: "NodeHsnNics", disc: "NodeHsnNic", parent: xname.Node},
	xname.NodeEnclosurePowerSupply: {array: "NodeEnclosurePowerSupplies", disc: "NodeEnclosurePowerSupply"},
	xname.NodeBMC:                  {array: "NodeBMCs", disc: "NodeBMC"},
	xname.RouterBMC:                {array: "RouterBMCs", disc: "RouterBMC"},
}

// hwArrays are the arrays of an HWInventory, in the spec's order.
var hwArrays = []string{"Cabinets", "Chassis", "ComputeModules", "RouterModules", "NodeEnclosures", "HSNBoards",
	"MgmtSwitches", "MgmtHLSwitches", "CDUMgmtSwitches", "Nodes", "Processors", "NodeAccels", "Drives", "Memory",
	"CabinetPDUs", "CabinetPDUPowerConnectors", "CMMRectifiers", "NodeAccelRisers", "NodeHsnNics",
	"NodeEnclosurePowerSupplies", "NodeBMCs", "RouterBMCs"}

// The formats of an HWInventory.
const (
	hwFullyFlat     = "FullyFlat"
	hwNestNodesOnly = "NestNodesOnly"
	hwHierarchical  = "Hierarchical"
)

// queryHardware serves GET /Inventory/Hardware/Query/{xname}: an HWInventory
// of the locations parseHWQuery selects. As in the shipped HSM, selecting
// nothing is 200 with no arrays.
func (a *API) queryHardware(w http.ResponseWriter, r *http.Request) {
	q, format, err := parseHWQuery(r)
	core.LogIgnored(r, a.log, q.ignored)
	var locs []hwLoc
	if err == nil {
		locs, err = a.store.hwQueryLocs(r.Context(), q)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, newHWInventory(q.target, format, locs))
}

// parseHWQuery reads the {xname} and the type, children, parents,
// Partition and format parameters of a Query; bad ones are ErrInvalid
// naming them.
func parseHWQuery(r *http.Request) (hwQuery, string, error) {
	raw := r.PathValue("xname")
	q, format := hwQuery{target: strings.ToLower(strings.TrimSpace(raw)), children: true}, hwNestNodesOnly
	if q.target != "s0" && q.target != "all" && q.target != "all_comp" {
		if !xname.Valid(raw) {
			return q, "", problem.Invalidf("xname: %q is not a valid xname", raw)
		}
		q.target = xname.Normalize(raw)
	}
	for k, vs := range r.URL.Query() {
		var err error
		switch name := strings.ToLower(k); name {
		case "type":
			err = core.ParseMatch(name, vs, &q.types, core.NormType)
		case "children", "parents":
			dst := map[string]*bool{"children": &q.children, "parents": &q.parents}[name]
			for _, v := range vs {
				if *dst, err = strconv.ParseBool(v); err != nil {
					return q, "", problem.Invalidf("query parameter %s: %q is not a boolean", k, v)
				}
			}
		case "partition":
			for _, v := range vs {
				if xname.TypeOf(v) != xname.Partition {
					return q, "", problem.Invalidf("query parameter %s: %q is not a partition (p#.#)", k, v)
				}
				q.partitions = append(q.partitions, xname.Normalize(v))
			}
		case "format":
			i := slices.IndexFunc([]string{hwFullyFlat, hwNestNodesOnly, hwHierarchical}, func(f string) bool { return strings.EqualFold(f, vs[0]) })
			if i < 0 || len(vs) > 1 {
				return q, "", problem.Invalidf("query parameter %s: invalid value %q", k, strings.Join(vs, ","))
			}
			format = []string{hwFullyFlat, hwNestNodesOnly, hwHierarchical}[i]
		case "xname":
			// The shipped HSM reads only the parameters above; clients
			// send xname= too (the path already names it), so it is
			// ignored rather than refused like other unknown names.
		default:
			q.ignored = append(q.ignored, k)
		}
		if err != nil {
			return q, "", err
		}
	}
	return q, format, nil
}

// hwNode is a location of an HWInventory with the locations nested in it.
type hwNode struct {
	body   json.RawMessage
	nested map[string][]*hwNode
}

// MarshalJSON writes the stored body with the nested arrays added to it.
func (n *hwNode) MarshalJSON() ([]byte, error) {
	if len(n.nested) == 0 {
		return n.body, nil
	}
	b := bytes.TrimSpace(n.body)
	b = slices.Clip(b[:len(b)-1]) // without its closing brace; appending copies
	for _, name := range hwArrays {
		kids, ok := n.nested[name]
		if !ok {
			continue
		}
		arr, err := json.Marshal(kids)
		if err != nil {
			return nil, err
		}
		if b[len(b)-1] != '{' {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), name...), `":`...)
		b = append(b, arr...)
	}
	return append(b, '}'), nil
}

// hwInventory is HMS's HWInventory: the query target, the format and the
// arrays that have locations (the shipped HSM omits empty ones).
type hwInventory struct {
	xname, format string
	arrays        map[string][]*hwNode
}

// MarshalJSON writes XName, Format and the arrays in the spec's order.
func (inv hwInventory) MarshalJSON() ([]byte, error) {
	x, _ := json.Marshal(inv.xname)
	f, _ := json.Marshal(inv.format)
	b := append(append(append([]byte(`{"XName":`), x...), `,"Format":`...), f...)
	for _, name := range hwArrays {
		if len(inv.arrays[name]) == 0 {
			continue
		}
		arr, err := json.Marshal(inv.arrays[name])
		if err != nil {
			return nil, err
		}
		b = append(append(append(append(b, `,"`...), name...), `":`...), arr...)
	}
	return append(b, '}'), nil
}

// newHWInventory arranges locs (in ID order, so a parent comes before what
// it holds) in format: FullyFlat puts each in the array of its type;
// NestNodesOnly puts node subcomponents in their node when the node is in
// locs; Hierarchical nests every type the spec nests in its parent that is
// in locs. Types HWInventory has no array for are left out.
func newHWInventory(target, format string, locs []hwLoc) hwInventory {
	inv := hwInventory{xname: target, format: format, arrays: map[string][]*hwNode{}}
	byID := map[string]*hwNode{}
	for _, l := range locs {
		k, ok := hwKinds[xname.Type(l.typ)]
		if !ok {
			continue
		}
		n := &hwNode{body: l.body}
		byID[l.id] = n
		var parent *hwNode
		if format == hwHierarchical || (format == hwNestNodesOnly && k.parent == xname.Node) {
			for _, a := range ancestors(l.id) {
				if xname.TypeOf(a) == k.parent {
					parent = byID[a]
					break
				}
			}
		}
		if parent == nil {
			inv.arrays[k.array] = append(inv.arrays[k.array], n)
			continue
		}
		if parent.nested == nil {
			parent.nested = map[string][]*hwNode{}
		}
		parent.nested[k.array] = append(parent.nested[k.array], n)
	}
	return inv
}
