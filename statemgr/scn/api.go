package scn

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// API serves /Subscriptions/SCN over a Store.
type API struct {
	store *Store
	log   *slog.Logger
}

// NewAPI returns the handlers of store.
func NewAPI(store *Store, log *slog.Logger) *API { return &API{store: store, log: log} }

// Routes registers /Subscriptions/SCN.
func (a *API) Routes(mux *httpserver.Mux) {
	s := hsm.Base + "/Subscriptions/SCN"
	mux.HandleFunc("GET "+s, a.listSubscriptions)
	mux.HandleFunc("POST "+s, a.postSubscription)
	mux.HandleFunc("DELETE "+s, a.deleteSubscriptions)
	mux.HandleFunc("GET "+s+"/{id}", a.getSubscription)
	mux.HandleFunc("PUT "+s+"/{id}", a.putSubscription)
	mux.HandleFunc("PATCH "+s+"/{id}", a.patchSubscription)
	mux.HandleFunc("DELETE "+s+"/{id}", a.deleteSubscriptions)
	mux.HandleFunc("GET "+s+"/deadletters", a.listDeadLetters)
	mux.HandleFunc("DELETE "+s+"/deadletters", a.deleteDeadLetters)
	mux.HandleFunc("DELETE "+s+"/deadletters/{id}", a.deleteDeadLetters)
}

func (a *API) listSubscriptions(w http.ResponseWriter, r *http.Request) {
	subs, err := a.store.subscriptions(r.Context())
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, hsm.SubscriptionList{SubscriptionList: subs})
}

func (a *API) getSubscription(w http.ResponseWriter, r *http.Request) {
	id, err := parseSubscriptionID(r.PathValue("id"))
	var sub hsm.Subscription
	if err == nil {
		sub, err = a.store.subscription(r.Context(), id)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, sub)
}

func (a *API) postSubscription(w http.ResponseWriter, r *http.Request) {
	var sub hsm.Subscription
	err := httpserver.ReadJSON(w, r, 0, &sub)
	if err == nil {
		sub, err = a.store.CreateSubscription(r.Context(), sub)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, sub)
}

func (a *API) putSubscription(w http.ResponseWriter, r *http.Request) {
	id, err := parseSubscriptionID(r.PathValue("id"))
	var sub hsm.Subscription
	if err == nil {
		err = httpserver.ReadJSON(w, r, 0, &sub)
	}
	if err == nil {
		sub, err = a.store.replaceSubscription(r.Context(), id, sub)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) patchSubscription(w http.ResponseWriter, r *http.Request) {
	id, err := parseSubscriptionID(r.PathValue("id"))
	var p hsm.SubscriptionPatch
	if err == nil {
		err = httpserver.ReadJSON(w, r, 0, &p)
	}
	if err == nil {
		_, err = a.store.patchSubscription(r.Context(), id, p)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// deleteSubscriptions deletes one subscription ("Subscription deleted") or
// All of them ("%d Subscriptions deleted", 0 included), as HSM words it.
func (a *API) deleteSubscriptions(w http.ResponseWriter, r *http.Request) {
	var id int64
	var err error
	if s := r.PathValue("id"); s != "" {
		id, err = parseSubscriptionID(s)
	}
	var n int64
	if err == nil {
		n, err = a.store.DeleteSubscription(r.Context(), id)
	}
	switch {
	case err != nil:
		problem.Write(w, r, a.log, err)
	case id != 0:
		core.WriteMessage(w, "Subscription deleted")
	default:
		core.WriteMessage(w, fmt.Sprintf("%d Subscriptions deleted", n))
	}
}
