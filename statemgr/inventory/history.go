package inventory

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// histKind says how one of the two history views is keyed.
type histKind struct {
	col   string // rf_hw_history column the view groups by
	param string // query parameter selecting keys on the collection
	norm  func(string) (string, bool)
}

// key returns the normalised {key} path value, "" on the collection; a
// value norm refuses is ErrInvalid.
func (k histKind) key(r *http.Request) (string, error) {
	v := r.PathValue("key")
	if v == "" {
		return "", nil
	}
	n, ok := k.norm(v)
	if !ok {
		return "", problem.Invalidf("xname: %q is not a valid xname", v)
	}
	return n, nil
}

// hwHistory serves the history grouped by k, optionally of the one {key},
// filtered by eventtype and the starttime/endtime window (both inclusive)
// and, on the collection, by k.param.
func (a *API) hwHistory(k histKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key, err := k.key(r)
		q := r.URL.Query()
		var from, to string
		if err == nil {
			from, to, err = timeWindow(q)
		}
		cols := map[string]string{"eventtype": "event_type"}
		norm := map[string]func(string) (string, bool){"eventtype": normHWEvent, k.param: k.norm}
		if key == "" {
			cols[k.param] = k.col
		}
		var conds [][2]any
		if err == nil {
			var ignored []string
			conds, ignored, err = queryLists(q, cols, norm)
			core.LogIgnored(r, a.log, ignored)
		}
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		if key != "" {
			one, err := a.store.hwHistoryOf(r.Context(), k.col, key, conds, from, to)
			a.writeResult(w, r, one, err)
			return
		}
		out, err := a.store.hwHistory(r.Context(), k.col, conds, from, to)
		a.writeResult(w, r, map[string][]hsm.HWHistoryArray{"Components": out}, err)
	}
}

// writeResult writes v with 200, or err as a problem.
func (a *API) writeResult(w http.ResponseWriter, r *http.Request, v any, err error) {
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, v)
}

// deleteHWHistory deletes the history of {key}, or all history (of
// locations and FRUs alike: it is one record) on the collection.
func (a *API) deleteHWHistory(k histKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// Even for one xname or FRU HSM deletes a list of events, and says
		// "deleted %d entries".
		var conds [][2]any
		key, err := k.key(r)
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		if key != "" {
			conds = [][2]any{{k.col, []string{key}}}
		}
		n, err := a.store.deleteRows(r.Context(), "rf_hw_history", conds)
		a.deletedOrNotFound(w, r, n, err, delAll())
	}
}

// timeWindow removes starttime and endtime from q and returns them as
// stored timestamps, "" when absent.
func timeWindow(q url.Values) (from, to string, err error) {
	for k, vs := range q {
		var dst *string
		switch strings.ToLower(k) {
		case "starttime":
			dst = &from
		case "endtime":
			dst = &to
		default:
			continue
		}
		delete(q, k)
		t, err := core.ParseTime(k, vs[0])
		if err != nil {
			return "", "", err
		}
		*dst = t.UTC().Format(core.TSFormat)
	}
	return from, to, nil
}

func normHWEvent(v string) (string, bool) {
	for _, e := range []string{HWEventAdded, HWEventRemoved, HWEventScanned, HWEventDetected} {
		if strings.EqualFold(v, e) {
			return e, true
		}
	}
	return "", false
}
