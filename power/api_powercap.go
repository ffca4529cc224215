package power

import (
	"net/http"
	"strings"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
)

func (a *API) capSnapshot(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Xnames []string `json:"xnames"`
	}
	if err := httpserver.ReadJSON(w, r, 0, &req); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	if len(req.Xnames) == 0 {
		problem.WriteStatus(w, r, http.StatusBadRequest, "Xname list is empty. A list of xnames is required")
		return
	}
	comps := make([]CapComponent, len(req.Xnames))
	for i, x := range req.Xnames {
		comps[i] = CapComponent{Xname: x}
	}
	a.startCap(w, r, CapSnapshot, comps)
}

func (a *API) capPatch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Components []struct {
			Xname    string       `json:"xname"`
			Controls []CapSetting `json:"controls"`
		} `json:"components"`
	}
	if err := httpserver.ReadJSON(w, r, 0, &req); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	var bad []string
	comps := make([]CapComponent, len(req.Components))
	for i, c := range req.Components {
		for _, ctl := range c.Controls {
			if ctl.Name == "" || ctl.Value < 0 {
				bad = append(bad, c.Xname)
				break
			}
		}
		comps[i] = CapComponent{Xname: c.Xname, Set: c.Controls}
	}
	if len(bad) > 0 {
		// PCS's text, trailing space included.
		problem.WriteStatus(w, r, http.StatusBadRequest, "Invalid control parameters for xnames detected "+strings.Join(bad, " ")+" ")
		return
	}
	a.startCap(w, r, CapPatch, comps)
}

func (a *API) startCap(w http.ResponseWriter, r *http.Request, kind string, comps []CapComponent) {
	id, err := a.svc.CreateCap(r.Context(), kind, comps)
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	w.Header().Set("pcs.Location", "../power-cap/"+id)
	httpserver.WriteJSON(w, http.StatusOK, map[string]string{"taskID": id})
}

func (a *API) listCaps(w http.ResponseWriter, _ *http.Request) {
	httpserver.WriteJSON(w, http.StatusOK, map[string]any{"tasks": a.svc.Caps()})
}

func (a *API) getCap(w http.ResponseWriter, r *http.Request) {
	id, ok := parseID(w, r)
	if !ok {
		return
	}
	t, err := a.svc.Cap(id)
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, t)
}
