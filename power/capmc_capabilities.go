package power

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// get_power_cap_capabilities groups nodes by hardware type, with each
// type's limits and controls. capmcd named a type by its Redfish hardware
// description; pcs reads only the chassis Power resource, so a type here
// is the nodes HSM gives the same Class and Arch whose Power resources
// report the same limits and controls. Its name is opaque (as the spec
// says) and stable for a given set of values; supply is the node control's
// PowerCapacityWatts (else its maximum) and static is 0, neither of which
// Redfish reports otherwise. The spec (capmc-swagger.yaml) is followed
// where the shipped capmcd is not on record.

type capmcCapControl struct {
	Name string `json:"name"`
	Desc string `json:"desc"`
	Min  int    `json:"min"`
	Max  int    `json:"max"`
}

type capmcCapGroup struct {
	Name         string            `json:"name"`
	Desc         string            `json:"desc"`
	HostLimitMax int               `json:"host_limit_max"`
	HostLimitMin int               `json:"host_limit_min"`
	Static       int               `json:"static"`
	Supply       int               `json:"supply"`
	Powerup      int               `json:"powerup"`
	NIDs         []int             `json:"nids"`
	Controls     []capmcCapControl `json:"controls"`
}

type capmcCapabilities struct {
	E      int             `json:"e"`
	ErrMsg string          `json:"err_msg"`
	Groups []capmcCapGroup `json:"groups"`
}

func (a *API) capmcCapabilities(w http.ResponseWriter, r *http.Request) {
	var req struct {
		NIDs []int `json:"nids"`
	}
	if err := readCAPMC(w, r, &req); err != nil {
		a.capmcError(w, r, err)
		return
	}
	nodes, nids, err := a.capabilityNodes(r.Context(), req.NIDs)
	if err != nil {
		a.capmcError(w, r, err)
		return
	}
	comps := make([]CapComponent, len(nids))
	for i, n := range nids {
		comps[i] = CapComponent{Xname: nodes[n].ID}
	}
	a.svc.capAll(r.Context(), CapSnapshot, comps)
	httpserver.WriteJSON(w, http.StatusOK, capabilityGroups(nids, nodes, comps))
}

// capabilityNodes resolves the asked NIDs (none: every node with a NID)
// to HSM's nodes, refusing unknown and duplicate NIDs by number.
func (a *API) capabilityNodes(ctx context.Context, asked []int) (map[int]hsm.Component, []int, error) {
	all, err := a.svc.hsm.Components(ctx, url.Values{"type": {"Node"}})
	if err != nil {
		return nil, nil, err
	}
	byNID := map[int]hsm.Component{}
	for _, c := range all {
		if c.NID != nil {
			byNID[*c.NID] = c
		}
	}
	if len(asked) == 0 {
		for n := range byNID {
			asked = append(asked, n)
		}
		slices.Sort(asked)
		return byNID, asked, nil
	}
	var bad, dup []string
	seen := map[int]bool{}
	for _, n := range asked {
		switch _, ok := byNID[n]; {
		case !ok:
			bad = append(bad, strconv.Itoa(n))
		case seen[n]:
			dup = append(dup, strconv.Itoa(n))
		}
		seen[n] = true
	}
	var msgs []string
	if len(bad) > 0 {
		msgs = append(msgs, "invalid nids: "+strings.Join(bad, ", "))
	}
	if len(dup) > 0 {
		msgs = append(msgs, "duplicate nids: "+strings.Join(dup, ", "))
	}
	if len(msgs) > 0 {
		return nil, nil, problem.Invalidf("Bad Request: %s", strings.Join(msgs, "; "))
	}
	return byNID, asked, nil
}

// capabilityGroups groups the snapshot of each NID by hardware type, in
// order of first NID; NIDs whose snapshot failed are counted in err_msg.
func capabilityGroups(nids []int, nodes map[int]hsm.Component, comps []CapComponent) capmcCapabilities {
	out := capmcCapabilities{Groups: []capmcCapGroup{}}
	at := map[string]int{}
	failed := 0
	for i, c := range comps {
		if c.Error != "" || c.Limits == nil {
			failed++
			continue
		}
		g := capabilityGroup(nodes[nids[i]], c)
		key := fmt.Sprintf("%s|%d|%d|%d|%d|%v", g.Desc, g.HostLimitMax, g.HostLimitMin, g.Supply, g.Powerup, g.Controls)
		j, ok := at[key]
		if !ok {
			j = len(out.Groups)
			at[key] = j
			out.Groups = append(out.Groups, g)
		}
		out.Groups[j].NIDs = append(out.Groups[j].NIDs, nids[i])
	}
	if failed > 0 {
		out.E, out.ErrMsg = -1, fmt.Sprintf("Errors encountered with %d/%d NIDs", failed, len(nids))
	}
	return out
}

// capabilityGroup is the type node belongs to, as its snapshot c shows it.
func capabilityGroup(node hsm.Component, c CapComponent) capmcCapGroup {
	val := func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	}
	desc := "Node"
	if parts := slices.DeleteFunc([]string{node.Class, node.Arch}, func(s string) bool { return s == "" }); len(parts) > 0 {
		desc = strings.Join(parts, "_")
	}
	g := capmcCapGroup{Desc: desc, HostLimitMax: val(c.Limits.HostLimitMax),
		HostLimitMin: val(c.Limits.HostLimitMin), Powerup: val(c.Limits.PowerupPower), Controls: []capmcCapControl{}}
	g.Supply = g.HostLimitMax
	if c.Limits.supply != nil {
		g.Supply = *c.Limits.supply
	}
	for _, ctl := range c.Controls {
		name, desc := ctl.Name, ctl.Name
		switch {
		case ctl.Name == "Node Power Control":
			name, desc = "node", "Node manager control"
		case strings.Contains(strings.ToLower(ctl.Name), "accel"):
			name, desc = "accel", "Accelerator control"
		}
		g.Controls = append(g.Controls, capmcCapControl{Name: name, Desc: desc, Min: val(ctl.Min), Max: val(ctl.Max)})
	}
	g.Name = fmt.Sprintf("%s_%d_%d_%d", g.Desc, g.HostLimitMin, g.HostLimitMax, g.Supply)
	return g
}
