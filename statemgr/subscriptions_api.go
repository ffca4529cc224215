package statemgr

import (
	"net/http"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
)

func (a *API) listSubscriptions(w http.ResponseWriter, r *http.Request) {
	subs, err := a.store.Subscriptions(r.Context())
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, hsm.SubscriptionList{SubscriptionList: subs})
}

func (a *API) getSubscription(w http.ResponseWriter, r *http.Request) {
	sub, err := a.store.Subscription(r.Context(), r.PathValue("id"))
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
	var sub hsm.Subscription
	err := httpserver.ReadJSON(w, r, 0, &sub)
	if err == nil {
		sub, err = a.store.ReplaceSubscription(r.Context(), r.PathValue("id"), sub)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) patchSubscription(w http.ResponseWriter, r *http.Request) {
	var p hsm.SubscriptionPatch
	err := httpserver.ReadJSON(w, r, 0, &p)
	if err == nil {
		_, err = a.store.PatchSubscription(r.Context(), r.PathValue("id"), p)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) deleteSubscriptions(w http.ResponseWriter, r *http.Request) {
	if err := a.store.DeleteSubscription(r.Context(), r.PathValue("id")); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, hsm.Response{Code: "0", Message: "deleted"})
}
