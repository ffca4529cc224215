package power

import (
	"net/http"
	"slices"
	"strings"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
)

// statusQuery is the body of POST /power-status (GET takes the same as
// query parameters, xname repeated).
type statusQuery struct {
	Xnames      []string `json:"xname"`
	PowerFilter string   `json:"powerStateFilter"`
	MgmtFilter  string   `json:"managementStateFilter"`
}

// statusJSON is one entry of the answer.
type statusJSON struct {
	Xname       string   `json:"xname"`
	PowerState  string   `json:"powerState"`
	MgmtState   string   `json:"managementState"`
	Error       string   `json:"error"`
	Supported   []string `json:"supportedPowerTransitions"`
	LastUpdated string   `json:"lastUpdated"`
}

func (a *API) getPowerStatus(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.powerStatus(w, r, statusQuery{Xnames: q["xname"], PowerFilter: q.Get("powerStateFilter"),
		MgmtFilter: q.Get("managementStateFilter")})
}

func (a *API) postPowerStatus(w http.ResponseWriter, r *http.Request) {
	var q statusQuery
	if err := httpserver.ReadJSON(w, r, 0, &q); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	a.powerStatus(w, r, q)
}

func (a *API) powerStatus(w http.ResponseWriter, r *http.Request, q statusQuery) {
	out, err := a.svc.PowerStatus(q)
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, map[string]any{"status": out})
}

// parsePowerFilter accepts PCS's values, case-insensitively: poweringoff
// counts as on and poweringon as off.
func parsePowerFilter(s string) (string, bool) {
	switch strings.ToLower(s) {
	case "":
		return "", true
	case "on", "poweringoff":
		return PowerOn, true
	case "off", "poweringon":
		return PowerOff, true
	case "undefined":
		return PowerUndefined, true
	}
	return "", false
}

// PowerStatus answers a power-status query from the cache: every cached
// component in xname order, or the asked ones in request order.
func (s *Service) PowerStatus(q statusQuery) ([]statusJSON, error) {
	pf, ok := parsePowerFilter(q.PowerFilter)
	if !ok {
		return nil, problem.Invalidf("invalid powerStateFilter type: %s", q.PowerFilter)
	}
	mf := strings.ToLower(q.MgmtFilter)
	if mf != "" && mf != MgmtAvailable && mf != MgmtUnavailable {
		return nil, problem.Invalidf("invalid ManagementStateFilter type: %s", q.MgmtFilter)
	}
	var bad []string
	for _, x := range q.Xnames {
		if !xname.Valid(x) || xname.Normalize(x) != x {
			bad = append(bad, x)
		}
	}
	if len(bad) > 0 {
		return nil, problem.Invalidf("invalid xnames detected: %s", strings.Join(bad, " "))
	}
	keep := func(e *entry) bool { return (pf == "" || e.power == pf) && (mf == "" || e.mgmt == mf) }
	out := []statusJSON{}
	if len(q.Xnames) == 0 {
		s.cache.each(func(x string, e *entry) {
			if keep(e) {
				out = append(out, toStatus(x, e))
			}
		})
		return out, nil
	}
	seen := map[string]bool{}
	for _, x := range q.Xnames {
		if seen[x] {
			continue
		}
		seen[x] = true
		e, ok := s.cache.get(x)
		switch {
		case !ok:
			msg := "Component can not have power state and managment state data" // sic, as PCS spells it
			if slices.Contains(powerable, string(xname.TypeOf(x))) {
				msg = "Component not found in component map."
			}
			out = append(out, statusJSON{Xname: x, Error: msg})
		case keep(&e):
			out = append(out, toStatus(x, &e))
		}
	}
	return out, nil
}

func toStatus(x string, e *entry) statusJSON {
	sup := e.supported
	if sup == nil {
		sup = []string{}
	}
	return statusJSON{Xname: x, PowerState: e.power, MgmtState: e.mgmt, Error: e.err, Supported: sup,
		LastUpdated: e.updated.Format("2006-01-02T15:04:05.999999999Z07:00")}
}
