package power

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/power/pcs"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// CAPMCBase is where the CAPMC v1 front is served.
const CAPMCBase = "/capmc/v1"

// The CAPMC front maps xname_on, xname_off and xname_reinit onto
// transitions and waits for them, as CSM's capmcd does since it proxies
// to PCS; get_xname_status answers from the power-status cache (source
// redfish, the default) or from HSM (source hsm). Answers are CAPMC's
// {e, err_msg} bodies, never problem+json.
func (a *API) capmcRoutes(mux *httpserver.Mux) {
	mux.HandleFunc("POST "+CAPMCBase+"/xname_on", a.capmcPower(pcs.OpOn, pcs.OpOn))
	mux.HandleFunc("POST "+CAPMCBase+"/xname_off", a.capmcPower(pcs.OpOff, pcs.OpForceOff))
	mux.HandleFunc("POST "+CAPMCBase+"/xname_reinit", a.capmcPower(pcs.OpSoftRestart, pcs.OpHardRestart))
	mux.HandleFunc("POST "+CAPMCBase+"/get_xname_status", a.capmcStatus)
	mux.HandleFunc("POST "+CAPMCBase+"/get_power_cap", a.capmcGetPowerCap)
	mux.HandleFunc("POST "+CAPMCBase+"/set_power_cap", a.capmcSetPowerCap)
	mux.HandleFunc("POST "+CAPMCBase+"/get_power_cap_capabilities", a.capmcCapabilities)
	mux.HandleFunc("GET "+CAPMCBase+"/health", a.health)
	mux.HandleFunc("GET "+CAPMCBase+"/liveness", httpserver.NoContent)
	mux.HandleFunc("GET "+CAPMCBase+"/readiness", httpserver.Readiness(a.ready...))
}

// capmcRequest is the body of xname_on, xname_off and xname_reinit.
type capmcRequest struct {
	Reason    string   `json:"reason"`
	Xnames    []string `json:"xnames"`
	Force     bool     `json:"force"`
	Recursive bool     `json:"recursive"`
	Prereq    bool     `json:"prereq"`
	Continue  bool     `json:"continue"`
}

type capmcXname struct {
	E      int    `json:"e"`
	ErrMsg string `json:"err_msg"`
	Xname  string `json:"xname"`
}

type capmcResponse struct {
	E      int          `json:"e"`
	ErrMsg string       `json:"err_msg"`
	Xnames []capmcXname `json:"xnames,omitempty"`
}

// capmcError answers CAPMC's error body with the status of err's kind.
func (a *API) capmcError(w http.ResponseWriter, r *http.Request, err error) {
	status := problem.Status(err)
	msg := err.Error()
	if status >= 500 && status != http.StatusServiceUnavailable {
		a.log.ErrorContext(r.Context(), "request_failed", "method", r.Method, "path", r.URL.Path, "err", err)
		msg = "internal error; see the service log"
	}
	httpserver.WriteJSON(w, status, capmcResponse{E: status, ErrMsg: msg})
}

func readCAPMC(w http.ResponseWriter, r *http.Request, v any) error {
	if err := httpserver.ReadJSON(w, r, 0, v); err != nil {
		return fmt.Errorf("Bad Request: %w", err)
	}
	return nil
}

func (a *API) capmcPower(op, forced pcs.Operation) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req capmcRequest
		if err := readCAPMC(w, r, &req); err != nil {
			a.capmcError(w, r, err)
			return
		}
		if len(req.Xnames) == 0 {
			a.capmcError(w, r, problem.Invalidf("Bad Request: Missing required xnames parameter"))
			return
		}
		use := op
		if req.Force {
			use = forced
		}
		out, err := a.capmcTransition(r.Context(), use, req.Xnames)
		if err != nil {
			a.capmcError(w, r, err)
			return
		}
		httpserver.WriteJSON(w, http.StatusOK, out)
	}
}

// capmcTransition runs a transition to its end and reports its failures
// per xname, as CAPMC does.
func (a *API) capmcTransition(ctx context.Context, op pcs.Operation, xnames []string) (capmcResponse, error) {
	locs := make([]pcs.Location, len(xnames))
	for i, x := range xnames {
		locs[i] = pcs.Location{Xname: x}
	}
	tr, err := a.svc.Create(ctx, op, DefaultDeadline, locs)
	if err != nil {
		return capmcResponse{}, err
	}
	if err := a.svc.Wait(ctx, tr.ID); err != nil {
		return capmcResponse{}, errors.Join(problem.Unavailablef("transition %s did not end before the request did", tr.ID), err)
	}
	done, _, err := a.svc.Get(tr.ID)
	if err != nil {
		return capmcResponse{}, err
	}
	out := capmcResponse{}
	for _, t := range done.Tasks {
		if t.Status != pcs.TaskSucceeded {
			msg := t.Error
			if msg == "" {
				msg = t.Description
			}
			out.Xnames = append(out.Xnames, capmcXname{E: -1, ErrMsg: msg, Xname: t.Xname})
		}
	}
	if len(out.Xnames) > 0 {
		out.E = -1
		out.ErrMsg = fmt.Sprintf("Errors encountered with %d/%d Xnames issued %s", len(out.Xnames), len(done.Tasks), op)
	}
	return out, nil
}

// statusRequest is the body of get_xname_status.
type statusRequest struct {
	Filter string   `json:"filter"`
	Source string   `json:"source"`
	Xnames []string `json:"xnames"`
}

func (a *API) capmcStatus(w http.ResponseWriter, r *http.Request) {
	var req statusRequest
	if err := readCAPMC(w, r, &req); err != nil {
		a.capmcError(w, r, err)
		return
	}
	lists, err := a.xnameStatus(r.Context(), req)
	if err != nil {
		a.capmcError(w, r, err)
		return
	}
	body := map[string]any{"e": 0, "err_msg": ""}
	for k, v := range lists {
		body[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

// capmcFilters are get_xname_status's filters and the list each shows.
var capmcFilters = map[string]string{"show_on": "on", "show_off": "off", "show_ready": "ready",
	"show_standby": "standby", "show_halt": "halt", "show_disabled": "disabled"}

// xnameStatus sorts the components into CAPMC's state lists.
func (a *API) xnameStatus(ctx context.Context, req statusRequest) (map[string][]string, error) {
	show := map[string]bool{}
	for f := range strings.SplitSeq(req.Filter, "|") {
		f = strings.TrimSpace(strings.ToLower(f))
		switch {
		case f == "" || f == "show_all":
		case capmcFilters[f] != "":
			show[capmcFilters[f]] = true
		case f == "show_alert" || f == "show_resvd" || f == "show_warn" || f == "show_diag":
		default:
			return nil, problem.Invalidf("Bad Request: invalid filter string: %s", f)
		}
	}
	lists := map[string][]string{}
	add := func(list, x string) {
		if len(show) == 0 || show[list] {
			lists[list] = append(lists[list], x)
		}
	}
	switch strings.ToLower(req.Source) {
	case "", "redfish", "hardware":
		st, err := a.svc.PowerStatus(pcs.PowerStatusRequest{Xnames: req.Xnames})
		if err != nil {
			return nil, err
		}
		for _, s := range st {
			if s.PowerState == pcs.PowerOn || s.PowerState == pcs.PowerOff {
				add(s.PowerState, s.Xname)
			}
		}
	case "hsm", "hms", "sm", "smd", "software":
		var comps []hsm.Component
		var err error
		if len(req.Xnames) == 0 {
			comps, err = a.svc.hsm.Components(ctx, nil)
		} else {
			comps, err = a.svc.hsm.QueryComponents(ctx, req.Xnames)
		}
		if err != nil {
			return nil, err
		}
		for _, c := range comps {
			if c.Enabled != nil && !*c.Enabled {
				add("disabled", c.ID)
			}
			switch c.State {
			case hsm.StateOn, hsm.StateOff, hsm.StateReady, hsm.StateStandby, hsm.StateHalt:
				add(strings.ToLower(c.State), c.ID)
			}
		}
	default:
		return nil, problem.Invalidf("Bad Request: invalid source: %s", req.Source)
	}
	return lists, nil
}
