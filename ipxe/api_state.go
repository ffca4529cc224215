package ipxe

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
)

// getHosts answers GET /boot/v1/hosts: the cached HSM nodes by name, MAC
// and NID (in that order, duplicates kept), or every one.
func (a *API) getHosts(w http.ResponseWriter, r *http.Request) {
	names, macs, nids := listParam(r.URL.Query(), "name"), listParam(r.URL.Query(), "mac"), listParam(r.URL.Query(), "nid")
	c := a.svc.cache
	if len(names)+len(macs)+len(nids) == 0 {
		out := []Host{}
		for _, n := range c.Nodes() {
			out = append(out, n.host())
		}
		writeJSON(w, http.StatusOK, jsonType, out)
		return
	}
	out := []Host{}
	for _, name := range names {
		n, ok := c.Node(name)
		if !ok {
			a.fail(w, r, problem.NotFoundf("Not Found - Unknown host name '%s'", name))
			return
		}
		out = append(out, n.host())
	}
	for _, mac := range macs {
		n, ok := c.ByMAC(mac)
		if !ok || strings.EqualFold(n.State, "Empty") {
			a.fail(w, r, problem.NotFoundf("Not Found - Unknown MAC address '%s'", mac))
			return
		}
		out = append(out, n.host())
	}
	for _, s := range nids {
		nid, err := strconv.ParseInt(s, 0, 0)
		if err != nil {
			a.fail(w, r, problem.Invalidf("Bad Request - Invalid nid '%s'", s))
			return
		}
		n, ok := c.ByNID(int(nid))
		if !ok {
			a.fail(w, r, problem.NotFoundf("Not Found - Unknown NID '%s'", s))
			return
		}
		out = append(out, n.host())
	}
	writeJSON(w, http.StatusOK, jsonType, out)
}

// postHosts answers POST /boot/v1/hosts: a re-read of HSM, answered once
// it is done, so the next request sees what HSM had (the reference answers
// 204 alone; a read that failed is the peer's error, 503, rather than a
// 204 for a re-read that did not happen).
func (a *API) postHosts(w http.ResponseWriter, r *http.Request) {
	if err := a.svc.ResyncWait(r.Context()); err != nil {
		// %v: HSM's own answer (a 401 to bss) is not the caller's fault.
		a.fail(w, r, fmt.Errorf("re-read HSM: %w: %v", problem.ErrUnavailable, err))
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	writeEmpty(w, http.StatusNoContent)
}

// dumpstate answers GET /boot/v1/dumpstate: the cached nodes and every
// record, entries without their cloud-init data (as hms-bss shows them).
func (a *API) dumpstate(w http.ResponseWriter, _ *http.Request) {
	var st struct {
		Components []Host       `json:"Components"`
		Params     []BootParams `json:"Params"`
	}
	for _, n := range a.svc.cache.Nodes() {
		st.Components = append(st.Components, n.host())
	}
	for _, bp := range a.svc.All() {
		bp.CloudInit = CloudInit{}
		st.Params = append(st.Params, bp)
	}
	writeJSON(w, http.StatusOK, jsonType, st)
}

// endpointHistory answers GET /boot/v1/endpoint-history.
func (a *API) endpointHistory(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name, ep := q.Get("name"), q.Get("endpoint")
	if name == "" && ep != "" {
		// hms-bss answers this 500 (its key-value search needs a name); it
		// is the caller's query that is wrong, so 400, with hms-bss's text.
		a.style.WriteStatus(w, r, http.StatusBadRequest, "Failed to search for name: , endpoint: "+ep)
		return
	}
	writeJSON(w, http.StatusOK, jsonType, a.svc.hist.query(name, ep))
}

// scn takes an HSM state-change notification (HSM's callback to BSS's
// subscription) and applies it to the cache before answering.
func (a *API) scn(w http.ResponseWriter, r *http.Request) {
	var scn SCN
	body, err := readBody(w, r, "%v")
	if err == nil {
		err = decodeStrict(body, &scn)
	}
	if err != nil {
		a.svc.m.scnBad.Inc()
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	a.svc.ApplySCN(&scn)
	w.WriteHeader(http.StatusOK)
}

// serviceStatus is the body of /boot/v1/service/*, in hms-bss's field order.
type serviceStatus struct {
	Version string `json:"bss-version,omitempty"`
	Status  string `json:"bss-status,omitempty"`
	HSM     string `json:"bss-status-hsm,omitempty"`
	Etcd    string `json:"bss-status-etcd,omitempty"`
}

// service answers GET /boot/v1/service/...: hms-bss upper-cases the path and
// adds a field for each of STATUS, VERSION, HSM and ETCD it contains (ALL
// adds every one). "etcd" reports the database, which replaces etcd here.
func (a *API) service(w http.ResponseWriter, r *http.Request) {
	p := strings.ToUpper(strings.TrimPrefix(r.URL.Path, Base+"/service/"))
	all := strings.Contains(p, "ALL")
	var st serviceStatus
	status := http.StatusOK
	check := func(word string, field *string, ok func() bool) {
		if !all && !strings.Contains(p, word) {
			return
		}
		*field = "connected"
		if !ok() {
			*field, status = "error", http.StatusInternalServerError
		}
	}
	if all || strings.Contains(p, "VERSION") {
		st.Version = a.version
	}
	if all || strings.Contains(p, "STATUS") {
		st.Status = "running"
	}
	check("HSM", &st.HSM, func() bool { return a.svc.HSMReady(r.Context()) == nil })
	check("ETCD", &st.Etcd, func() bool { return a.svc.store.Ping(r.Context()) == nil })
	writeJSON(w, status, "text/plain; charset=utf-8", st)
}
