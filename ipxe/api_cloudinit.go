package ipxe

import (
	"net/http"

	"github.com/hmsuite/hms/internal/problem"
)

// metaData answers GET /meta-data for the calling node.
func (a *API) metaData(w http.ResponseWriter, r *http.Request) {
	n, ip := a.svc.callerNode(r.Context(), r)
	v, err := a.svc.MetaData(n, ip, r.URL.Query().Get("key"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	// hms-bss sets no Content-Type here; Go sniffs this one.
	writeJSON(w, http.StatusOK, "text/plain; charset=utf-8", v)
}

// userData answers GET /user-data for the calling node.
func (a *API) userData(w http.ResponseWriter, r *http.Request) {
	doc, err := a.svc.UserData(a.svc.caller(r.Context(), r))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/yaml")
	_, _ = w.Write([]byte(doc))
}

// phoneHome answers POST /phone-home: the calling node's SSH keys and
// names, stored in its own entry.
func (a *API) phoneHome(w http.ResponseWriter, r *http.Request) {
	var ph PhoneHome
	body, err := readBody(w, r, "Bad Request: %v")
	if err == nil && decodeStrict(body, &ph) != nil {
		err = problem.Invalidf("Bad Request")
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out, err := a.svc.PhoneHome(r.Context(), a.svc.caller(r.Context(), r), ph)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, jsonType, out)
}
