package power

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
)

// CAPMC's power capping is by NID, with controls named "node" and
// "accel"; pcs maps "node" to the node's "Node Power Control" and any other
// name to the control spelt so, and answers synchronously (no task).

type capmcControl struct {
	Name string `json:"name"`
	Val  int    `json:"val"`
}

type capmcNID struct {
	NID      int            `json:"nid"`
	E        int            `json:"e"`
	ErrMsg   string         `json:"err_msg"`
	Controls []capmcControl `json:"controls,omitempty"`
}

type capmcNIDs struct {
	E      int        `json:"e"`
	ErrMsg string     `json:"err_msg"`
	NIDs   []capmcNID `json:"nids"`
}

// capmcControlName maps CAPMC's control names to Redfish's.
func capmcControlName(n string) string {
	if strings.EqualFold(n, "node") {
		return "Node Power Control"
	}
	return n
}

// nidXnames maps NIDs to node xnames through HSM; unknown NIDs are ErrInvalid.
func (a *API) nidXnames(ctx context.Context, nids []int) (map[int]string, error) {
	if len(nids) == 0 {
		return nil, problem.Invalidf("Bad Request: Missing required nids parameter")
	}
	nodes, err := a.svc.hsm.Components(ctx, url.Values{"type": {"Node"}})
	if err != nil {
		return nil, err
	}
	byNID := map[int]string{}
	for _, c := range nodes {
		if c.NID != nil {
			byNID[*c.NID] = c.ID
		}
	}
	out := map[int]string{}
	var bad []string
	for _, n := range nids {
		x, ok := byNID[n]
		if !ok {
			bad = append(bad, strconv.Itoa(n))
		}
		out[n] = x
	}
	if len(bad) > 0 {
		return nil, problem.Invalidf("Bad Request: invalid nids: %s", strings.Join(bad, ", "))
	}
	return out, nil
}

func (a *API) capmcGetPowerCap(w http.ResponseWriter, r *http.Request) {
	var req struct {
		NIDs []int `json:"nids"`
	}
	if err := readCAPMC(w, r, &req); err != nil {
		a.capmcError(w, r, err)
		return
	}
	xs, err := a.nidXnames(r.Context(), req.NIDs)
	if err != nil {
		a.capmcError(w, r, err)
		return
	}
	comps := make([]CapComponent, len(req.NIDs))
	for i, n := range req.NIDs {
		comps[i] = CapComponent{Xname: xs[n]}
	}
	a.svc.capAll(r.Context(), CapSnapshot, comps)
	httpserver.WriteJSON(w, http.StatusOK, capmcAnswer(req.NIDs, comps, true))
}

func (a *API) capmcSetPowerCap(w http.ResponseWriter, r *http.Request) {
	var req struct {
		NIDs []struct {
			NID      int            `json:"nid"`
			Controls []capmcControl `json:"controls"`
		} `json:"nids"`
	}
	if err := readCAPMC(w, r, &req); err != nil {
		a.capmcError(w, r, err)
		return
	}
	nids := make([]int, len(req.NIDs))
	for i, n := range req.NIDs {
		nids[i] = n.NID
	}
	xs, err := a.nidXnames(r.Context(), nids)
	if err != nil {
		a.capmcError(w, r, err)
		return
	}
	comps := make([]CapComponent, len(req.NIDs))
	for i, n := range req.NIDs {
		comps[i] = CapComponent{Xname: xs[n.NID]}
		for _, c := range n.Controls {
			comps[i].Set = append(comps[i].Set, CapSetting{Name: capmcControlName(c.Name), Value: c.Val})
		}
	}
	a.svc.capAll(r.Context(), CapPatch, comps)
	httpserver.WriteJSON(w, http.StatusOK, capmcAnswer(nids, comps, false))
}

// capmcAnswer turns components back into CAPMC's per-NID answer.
func capmcAnswer(nids []int, comps []CapComponent, withControls bool) capmcNIDs {
	out := capmcNIDs{NIDs: make([]capmcNID, len(nids))}
	failed := 0
	for i, c := range comps {
		e := capmcNID{NID: nids[i]}
		if c.Error != "" {
			e.E, e.ErrMsg = -1, c.Error
			failed++
		}
		if withControls {
			for _, ctl := range c.Controls {
				name := ctl.Name
				if name == "Node Power Control" {
					name = "node"
				}
				v := 0
				if ctl.Current != nil {
					v = *ctl.Current
				}
				e.Controls = append(e.Controls, capmcControl{Name: name, Val: v})
			}
		}
		out.NIDs[i] = e
	}
	if failed > 0 {
		out.E, out.ErrMsg = -1, fmt.Sprintf("Errors encountered with %d/%d NIDs", failed, len(nids))
	}
	return out
}
