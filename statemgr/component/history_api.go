package component

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// GET /State/Components/History[/{xname}] is the suite's extension: shipped
// HSM records no component state history (its GET of the collection answers
// 404 "no such xname.", as for any unknown component). It follows HSM's
// hardware history, GET /Inventory/Hardware/History[/{xname}]: the same
// paths under the resource, the same bodies ({"Components":[{"ID",
// "History":[...]}]} sorted by ID, {"ID","History":[...]} for one xname,
// 200 with an empty History for an xname without changes), the same
// parameters (id, repeated; starttime and endtime, RFC 3339, inclusive;
// names in any case; unknown ones ignored), plus state (the State changed
// to, repeated) and limit (the newest N changes; defaultHistoryLimit when
// not given, so a bare GET does not read the whole retained history -
// 200,000 changes by default - into one response).

// byAPI marks the component writes h makes as made through the API, by
// the caller its User-Agent names, for the component history.
func byAPI(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := core.Cause{Kind: hsm.CauseAPI, Agent: core.AgentOf(r.UserAgent())}
		h(w, r.WithContext(core.WithCause(r.Context(), c)))
	}
}

func (a *API) getHistory(w http.ResponseWriter, r *http.Request) {
	q, err := a.historyQuery(r, true)
	var out []hsm.StateHistory
	if err == nil {
		out, err = a.store.History(r.Context(), q)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, hsm.StateHistoryList{Components: out})
}

func (a *API) getHistoryOf(w http.ResponseWriter, r *http.Request) {
	id, err := core.PathID(r)
	var q HistoryQuery
	if err == nil {
		q, err = a.historyQuery(r, false)
	}
	var out []hsm.StateHistory
	if err == nil {
		q.IDs = []string{id}
		out, err = a.store.History(r.Context(), q)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	one := hsm.StateHistory{ID: id, History: []hsm.StateChange{}}
	if len(out) > 0 {
		one = out[0]
	}
	httpserver.WriteJSON(w, http.StatusOK, one)
}

// historyQuery reads the history parameters of r; id only on the
// collection (withIDs).
func (a *API) historyQuery(r *http.Request, withIDs bool) (HistoryQuery, error) {
	q := HistoryQuery{Limit: defaultHistoryLimit}
	var ignored []string
	for k, vs := range r.URL.Query() {
		var err error
		switch lk := strings.ToLower(k); {
		case lk == "id" && withIDs:
			q.IDs, err = historyIDs(k, vs)
		case lk == "state":
			q.States, err = historyStates(k, vs)
		case lk == "starttime":
			q.From, err = core.ParseTime(k, vs[0])
		case lk == "endtime":
			q.To, err = core.ParseTime(k, vs[0])
		case lk == "limit":
			q.Limit, err = historyLimit(k, vs[0])
		default:
			ignored = append(ignored, k)
		}
		if err != nil {
			return q, err
		}
	}
	core.LogIgnored(r, a.log, ignored)
	return q, nil
}

func historyIDs(k string, vs []string) ([]string, error) {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		if !xname.Valid(v) {
			return nil, problem.Invalidf("query parameter %s: %q is not a valid xname", k, v)
		}
		out = append(out, xname.Normalize(v))
	}
	return out, nil
}

func historyStates(k string, vs []string) ([]string, error) {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		n, ok := hsm.States.Normalize(v)
		if !ok {
			return nil, problem.Invalidf("query parameter %s: invalid value %q", k, v)
		}
		out = append(out, n)
	}
	return out, nil
}

// defaultHistoryLimit is the number of changes a history GET without limit
// answers with: the newest ones. A caller wanting more asks for more. A
// variable for the tests.
var defaultHistoryLimit = 10000

func historyLimit(k, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, problem.Invalidf("query parameter %s: %q is not a positive integer", k, v)
	}
	return n, nil
}
