package power

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/power/pcs"
)

func (a *API) getPowerStatus(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.powerStatus(w, r, pcs.PowerStatusRequest{Xnames: q["xname"], PowerFilter: q.Get("powerStateFilter"),
		MgmtFilter: q.Get("managementStateFilter")})
}

func (a *API) postPowerStatus(w http.ResponseWriter, r *http.Request) {
	var q pcs.PowerStatusRequest
	if err := httpserver.ReadJSON(w, r, 0, &q); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	a.powerStatus(w, r, q)
}

// statusChunk is how much of a power-status answer is encoded before it
// is handed to the connection: the answer streams (10,000 nodes are about
// 2.5 MB) instead of being built whole, so the first bytes leave while the
// rest is encoded and no buffer of the answer's size is allocated.
const statusChunk = 32 << 10

func (a *API) powerStatus(w http.ResponseWriter, r *http.Request, q pcs.PowerStatusRequest) {
	sq, err := a.svc.statusQuery(q)
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	bp, _ := a.bufs.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, 0, statusChunk+4096)
		bp = &b
	}
	defer a.bufs.Put(bp)
	w.Header().Set("Content-Type", "application/json")
	buf := append((*bp)[:0], `{"status":[`...)
	n := 0
	sq.visit(func(st *pcs.PowerStatus) {
		if n > 0 {
			buf = append(buf, ',')
		}
		n++
		buf = appendStatus(buf, st)
		if len(buf) >= statusChunk {
			_, _ = w.Write(buf)
			buf = buf[:0]
		}
	})
	buf = append(buf, "]}\n"...)
	_, _ = w.Write(buf)
	*bp = buf
}

// appendStatus encodes s as encoding/json would, without reflection: a
// power-status answer for 10,000 nodes is written in a few milliseconds.
func appendStatus(b []byte, s *pcs.PowerStatus) []byte {
	b = append(b, `{"xname":`...)
	b = appendString(b, s.Xname)
	b = append(b, `,"powerState":`...)
	b = appendString(b, s.PowerState)
	b = append(b, `,"managementState":`...)
	b = appendString(b, s.MgmtState)
	b = append(b, `,"error":`...)
	b = appendString(b, s.Error)
	b = append(b, `,"supportedPowerTransitions":`...)
	if s.Supported == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, t := range s.Supported {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, t)
		}
		b = append(b, ']')
	}
	b = append(b, `,"lastUpdated":`...)
	b = appendString(b, s.LastUpdated)
	return append(b, '}')
}

// appendString appends s as a JSON string; text with anything but
// printable ASCII other than quote and backslash goes through encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// parsePowerFilter accepts PCS's values, case-insensitively: poweringoff
// counts as on and poweringon as off.
func parsePowerFilter(s string) (string, bool) {
	switch strings.ToLower(s) {
	case "":
		return "", true
	case "on", "poweringoff":
		return pcs.PowerOn, true
	case "off", "poweringon":
		return pcs.PowerOff, true
	case "undefined":
		return pcs.PowerUndefined, true
	}
	return "", false
}

// PowerStatus answers a power-status query from the cache: every cached
// component in xname order, or the asked ones in request order.
func (s *Service) PowerStatus(q pcs.PowerStatusRequest) ([]pcs.PowerStatus, error) {
	sq, err := s.statusQuery(q)
	if err != nil {
		return nil, err
	}
	out := []pcs.PowerStatus{}
	sq.visit(func(st *pcs.PowerStatus) { out = append(out, *st) })
	return out, nil
}

// statusQuery is a checked power-status query.
type statusQuery struct {
	cache      *statusCache
	xnames     []string
	power, mgt string
}

// statusQuery checks q: filters and xnames.
func (s *Service) statusQuery(q pcs.PowerStatusRequest) (statusQuery, error) {
	pf, ok := parsePowerFilter(q.PowerFilter)
	if !ok {
		return statusQuery{}, problem.Invalidf("invalid powerStateFilter type: %s", q.PowerFilter)
	}
	mf := strings.ToLower(q.MgmtFilter)
	if mf != "" && mf != pcs.MgmtAvailable && mf != pcs.MgmtUnavailable {
		return statusQuery{}, problem.Invalidf("invalid ManagementStateFilter type: %s", q.MgmtFilter)
	}
	var bad []string
	for _, x := range q.Xnames {
		if !xname.Valid(x) || xname.Normalize(x) != x {
			bad = append(bad, x)
		}
	}
	if len(bad) > 0 {
		return statusQuery{}, problem.Invalidf("invalid xnames detected: %s", strings.Join(bad, " "))
	}
	return statusQuery{cache: s.cache, xnames: q.Xnames, power: pf, mgt: mf}, nil
}

func (q statusQuery) keep(e *entry) bool {
	return (q.power == "" || e.power == q.power) && (q.mgt == "" || e.mgmt == q.mgt)
}

// visit calls fn with each entry of the answer; st is reused between calls.
func (q statusQuery) visit(fn func(st *pcs.PowerStatus)) {
	var st pcs.PowerStatus
	if len(q.xnames) == 0 {
		for _, s := range q.cache.snapshot() {
			if e := s.e.Load(); q.keep(e) {
				setStatus(&st, s.x, e)
				fn(&st)
			}
		}
		return
	}
	seen := make(map[string]bool, len(q.xnames))
	for _, x := range q.xnames {
		if seen[x] {
			continue
		}
		seen[x] = true
		e, ok := q.cache.get(x)
		switch {
		case !ok:
			msg := "Component can not have power state and managment state data" // sic, as PCS spells it
			if slices.Contains(powerable, string(xname.TypeOf(x))) {
				msg = "Component not found in component map."
			}
			st = pcs.PowerStatus{Xname: x, Error: msg}
			fn(&st)
		case q.keep(e):
			setStatus(&st, x, e)
			fn(&st)
		}
	}
}

func setStatus(st *pcs.PowerStatus, x string, e *entry) {
	sup := e.supported
	if sup == nil {
		sup = []string{} // zero-sized: no allocation
	}
	*st = pcs.PowerStatus{Xname: x, PowerState: e.power, MgmtState: e.mgmt, Error: e.err, Supported: sup,
		LastUpdated: e.updated}
}
