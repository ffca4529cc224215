package ethernet

import (
	"log/slog"
	"net/http"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// API serves /Inventory/EthernetInterfaces over a Store.
type API struct {
	store *Store
	log   *slog.Logger
}

// NewAPI returns the handlers of store.
func NewAPI(store *Store, log *slog.Logger) *API { return &API{store: store, log: log} }

// Routes registers /Inventory/EthernetInterfaces.
func (a *API) Routes(mux *httpserver.Mux) {
	e := hsm.Base + "/Inventory/EthernetInterfaces"
	mux.HandleFunc("GET "+e, a.listEthernet)
	mux.HandleFunc("POST "+e, a.postEthernet)
	mux.HandleFunc("POST "+e+"/Bulk", a.postEthernetBulk)
	mux.HandleFunc("DELETE "+e, a.deleteEthernet)
	mux.HandleFunc("GET "+e+"/{id}", a.getEthernet)
	mux.HandleFunc("PATCH "+e+"/{id}", a.patchEthernet)
	mux.HandleFunc("DELETE "+e+"/{id}", a.deleteEthernet)
	mux.HandleFunc("GET "+e+"/{id}/IPAddresses", a.getEthernetIPs)
	mux.HandleFunc("POST "+e+"/{id}/IPAddresses", a.setEthernetIP(true))
	mux.HandleFunc("PATCH "+e+"/{id}/IPAddresses/{ip}", a.setEthernetIP(false))
	mux.HandleFunc("DELETE "+e+"/{id}/IPAddresses/{ip}", a.deleteEthernetIP)
}

func (a *API) listEthernet(w http.ResponseWriter, r *http.Request) {
	f, err := parseFilter(r.URL.Query())
	core.LogIgnored(r, a.log, f.ignored)
	var out []hsm.EthernetInterface
	if err == nil {
		out, err = a.store.list(r.Context(), f)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, out)
}

func (a *API) postEthernet(w http.ResponseWriter, r *http.Request) {
	var ei hsm.EthernetInterface
	err := httpserver.ReadJSON(w, r, 0, &ei)
	if err == nil {
		ei, err = a.store.Create(r.Context(), ei)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	// One object, not the array other POSTs answer: the shipped HSM does so.
	uri := hsm.Base + "/Inventory/EthernetInterfaces/" + ei.ID
	w.Header().Set("Location", uri)
	httpserver.WriteJSON(w, http.StatusCreated, hsm.ResourceURI{URI: uri})
}

// bulkLimit caps the body of POST /Inventory/EthernetInterfaces/Bulk.
const bulkLimit = 64 << 20

// postEthernetBulk serves the extension POST
// /Inventory/EthernetInterfaces/Bulk: a JSON array of interfaces, created
// in one transaction, all or nothing; 204. Shipped HSM creates one
// interface per POST: a client registering many (`hms apply`) would pay
// one request, and one commit, per interface.
func (a *API) postEthernetBulk(w http.ResponseWriter, r *http.Request) {
	var eis []hsm.EthernetInterface
	err := httpserver.ReadJSON(w, r, bulkLimit, &eis)
	if err == nil {
		err = a.store.CreateAll(r.Context(), eis)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) getEthernet(w http.ResponseWriter, r *http.Request) {
	ei, err := a.store.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, ei)
}

func (a *API) patchEthernet(w http.ResponseWriter, r *http.Request) {
	var p hsm.EthernetPatch
	err := httpserver.ReadJSON(w, r, 0, &p)
	var ei hsm.EthernetInterface
	if err == nil {
		ei, err = a.store.Patch(r.Context(), r.PathValue("id"), p)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, ei)
}

func (a *API) deleteEthernet(w http.ResponseWriter, r *http.Request) {
	n, err := a.store.delete(r.Context(), r.PathValue("id"))
	switch {
	case err != nil:
		problem.Write(w, r, a.log, err)
	case r.PathValue("id") != "":
		core.WriteDeletedOne(w)
	default:
		core.WriteDeleted(w, n)
	}
}

func (a *API) getEthernetIPs(w http.ResponseWriter, r *http.Request) {
	ei, err := a.store.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, ei.IPAddresses)
}

func (a *API) setEthernetIP(add bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var m hsm.IPAddressMapping
		err := httpserver.ReadJSON(w, r, 0, &m)
		if err == nil && !add {
			m.IPAddress = r.PathValue("ip")
		}
		if err == nil {
			err = a.store.setIP(r.Context(), r.PathValue("id"), m, add)
		}
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		if add {
			uri := hsm.Base + "/Inventory/EthernetInterfaces/" + r.PathValue("id") + "/IPAddresses/" + m.IPAddress
			httpserver.WriteJSON(w, http.StatusCreated, hsm.ResourceURI{URI: uri})
			return
		}
		w.WriteHeader(http.StatusOK)
	}
}

func (a *API) deleteEthernetIP(w http.ResponseWriter, r *http.Request) {
	if err := a.store.deleteIP(r.Context(), r.PathValue("id"), r.PathValue("ip")); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	core.WriteDeletedOne(w)
}
