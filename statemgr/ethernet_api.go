package statemgr

import (
	"net/http"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// ethernetRoutes registers /Inventory/EthernetInterfaces.
func (a *API) ethernetRoutes(mux *httpserver.Mux) {
	e := Base + "/Inventory/EthernetInterfaces"
	mux.HandleFunc("GET "+e, a.listEthernet)
	mux.HandleFunc("POST "+e, a.postEthernet)
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
	f, err := ParseEthernetFilter(r.URL.Query())
	var out []hsm.EthernetInterface
	if err == nil {
		out, err = a.store.EthernetInterfaces(r.Context(), f)
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
		ei, err = a.store.CreateEthernetInterface(r.Context(), ei)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	// One object, not the array other POSTs answer: the shipped HSM does so.
	uri := Base + "/Inventory/EthernetInterfaces/" + ei.ID
	w.Header().Set("Location", uri)
	httpserver.WriteJSON(w, http.StatusCreated, ResourceURI{URI: uri})
}

func (a *API) getEthernet(w http.ResponseWriter, r *http.Request) {
	ei, err := a.store.EthernetInterface(r.Context(), r.PathValue("id"))
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
		ei, err = a.store.PatchEthernetInterface(r.Context(), r.PathValue("id"), p)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, ei)
}

func (a *API) deleteEthernet(w http.ResponseWriter, r *http.Request) {
	n, err := a.store.DeleteEthernetInterface(r.Context(), r.PathValue("id"))
	switch {
	case err != nil:
		problem.Write(w, r, a.log, err)
	case r.PathValue("id") != "":
		writeDeletedOne(w)
	default:
		writeDeleted(w, n)
	}
}

func (a *API) getEthernetIPs(w http.ResponseWriter, r *http.Request) {
	ei, err := a.store.EthernetInterface(r.Context(), r.PathValue("id"))
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
			err = a.store.SetEthernetIP(r.Context(), r.PathValue("id"), m, add)
		}
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		if add {
			uri := Base + "/Inventory/EthernetInterfaces/" + r.PathValue("id") + "/IPAddresses/" + m.IPAddress
			httpserver.WriteJSON(w, http.StatusCreated, ResourceURI{URI: uri})
			return
		}
		w.WriteHeader(http.StatusOK)
	}
}

func (a *API) deleteEthernetIP(w http.ResponseWriter, r *http.Request) {
	if err := a.store.DeleteEthernetIP(r.Context(), r.PathValue("id"), r.PathValue("ip")); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	writeDeletedOne(w)
}
