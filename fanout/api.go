package fanout

import (
	"embed"
	"errors"
	"log/slog"
	"net/http"
	"path"
	"sync"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// Body limits: a subscription lists at most a few thousand xnames; an inbound
// SCN from HSM may list every node of a large system.
const (
	subscribeLimit = 1 << 20
	scnLimit       = 8 << 20
)

// API serves the hmnfd v1 and v2 REST API.
type API struct {
	svc    *Service
	log    *slog.Logger
	ready  []httpserver.ReadyFunc
	pmu    sync.Mutex
	params Params
	level  *slog.LevelVar
}

// NewAPI returns the API over svc. params are the static values GET /params
// reports; level, when not nil, is what PATCH /params Debug changes; ready
// are extra readiness checks (the store is always checked).
func NewAPI(svc *Service, log *slog.Logger, params Params, level *slog.LevelVar, ready ...httpserver.ReadyFunc) *API {
	params.ScnMaxCache = int(svc.batchMax.Load())
	params.ScnBackoff = int(svc.cfg.RetryMin.Seconds())
	params.SMTimeout = 10
	return &API{svc: svc, log: log, params: params, level: level,
		ready: append([]httpserver.ReadyFunc{svc.store.Ping}, ready...)}
}

// Handler returns the routed API.
func (a *API) Handler() *httpserver.Mux {
	mux := httpserver.NewMux(problemStyle())
	a.routes(mux)
	return mux
}

func (a *API) routes(mux *httpserver.Mux) {
	doc := httpserver.OpenAPI(apiDoc, "openapi.yaml")
	mux.HandleFunc("GET /hmi/{ver}/openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		if version(w, r) {
			doc(w, r)
		}
	})
	mux.HandleFunc("POST /hmi/v1/subscribe", a.postV1)
	mux.HandleFunc("PATCH /hmi/v1/subscribe", a.patchV1)
	mux.HandleFunc("DELETE /hmi/v1/subscribe", a.deleteV1)
	mux.HandleFunc("GET /hmi/{ver}/subscriptions", a.list)
	mux.HandleFunc("GET /hmi/v2/subscriptions/{xname}", a.listOne)
	mux.HandleFunc("DELETE /hmi/v2/subscriptions/{xname}/agents", a.deleteAgents)
	mux.HandleFunc("POST /hmi/v2/subscriptions/{xname}/agents/{agent}", a.postV2)
	mux.HandleFunc("PATCH /hmi/v2/subscriptions/{xname}/agents/{agent}", a.patchV2)
	mux.HandleFunc("DELETE /hmi/v2/subscriptions/{xname}/agents/{agent}", a.deleteV2)
	mux.HandleFunc("POST /hmi/{ver}/scn", a.scn)
	mux.HandleFunc("GET /hmi/v2/deadletters", a.deadLetters)
	mux.HandleFunc("DELETE /hmi/v2/deadletters", a.deleteDeadLetters)
	mux.HandleFunc("DELETE /hmi/v2/deadletters/{id}", a.deleteDeadLetters)
	mux.HandleFunc("GET /hmi/{ver}/params", a.getParams)
	mux.HandleFunc("PATCH /hmi/{ver}/params", a.patchParams)
	mux.HandleFunc("GET /hmi/{ver}/health", a.health)
	mux.HandleFunc("GET /hmi/{ver}/liveness", httpserver.NoContent)
	mux.Handle("GET /hmi/{ver}/readiness", httpserver.Readiness(a.ready...))
}

// apiDoc holds openapi.yaml, the document of both API versions, served at
// /hmi/v1/openapi.yaml and /hmi/v2/openapi.yaml.
//
//go:embed openapi.yaml
var apiDoc embed.FS

// version rejects API versions other than v1 and v2 in {ver} routes.
func version(w http.ResponseWriter, r *http.Request) bool {
	if v := r.PathValue("ver"); v != "v1" && v != "v2" {
		problemStyle().WriteStatus(w, r, http.StatusNotFound, "unknown API version "+v)
		return false
	}
	return true
}

// fail answers a failed request in hmnfd's problem shape: 400s are titled
// "Invalid Request" ("Bad DELETE request" for a DELETE that matched
// nothing), and the instance is the resource without its version
// ("/params"), or the path for the v2 routes under an xname or a dead
// letter's number.
func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	style := problemStyle()
	if errors.Is(err, errNoMatch) {
		style.Titles = map[int]string{http.StatusBadRequest: "Bad DELETE request"}
	}
	style.Write(w, r, a.log, err)
}

// problemStyle is hmnfd's problem shape (hms-messages.md 3.1).
func problemStyle() problem.Style {
	return problem.Style{
		Titles: map[int]string{http.StatusBadRequest: "Invalid Request"},
		Instance: func(r *http.Request) string {
			if r.PathValue("xname") != "" || r.PathValue("id") != "" {
				return r.URL.Path
			}
			return "/" + path.Base(r.URL.Path)
		},
	}
}

func (a *API) postV1(w http.ResponseWriter, r *http.Request) {
	k, sub, ok := a.readV1(w, r)
	if !ok {
		return
	}
	if err := a.svc.Subscribe(r.Context(), k, sub); err != nil {
		a.fail(w, r, err)
		return
	}
	// Shipped hmnfd answers v1 subscribe and its PATCH with 200 and an empty
	// body (the spec says 204); clients were written against the 200.
	w.WriteHeader(http.StatusOK)
}

func (a *API) patchV1(w http.ResponseWriter, r *http.Request) {
	k, sub, ok := a.readV1(w, r)
	if !ok {
		return
	}
	if err := a.svc.Update(r.Context(), k, sub); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// readV1 decodes a v1 body, whose Subscriber names the subscription.
func (a *API) readV1(w http.ResponseWriter, r *http.Request) (Key, Subscription, bool) {
	var sub Subscription
	if err := httpserver.ReadJSON(w, r, subscribeLimit, &sub); err != nil {
		a.fail(w, r, err)
		return Key{}, sub, false
	}
	k, err := ParseSubscriber(sub.Subscriber)
	if err != nil {
		a.fail(w, r, err)
		return Key{}, sub, false
	}
	sub.Subscriber, sub.SubscriberComponent, sub.SubscriberAgent = "", "", ""
	return k, sub, true
}

func (a *API) deleteV1(w http.ResponseWriter, r *http.Request) {
	var body Subscription
	if err := httpserver.ReadJSON(w, r, subscribeLimit, &body); err != nil {
		a.fail(w, r, err)
		return
	}
	k, err := ParseSubscriber(body.Subscriber)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if err := a.svc.Unsubscribe(r.Context(), k, false, body.Url); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (a *API) list(w http.ResponseWriter, r *http.Request) {
	if version(w, r) {
		writeList(w, a.svc.List(""))
	}
}

func (a *API) listOne(w http.ResponseWriter, r *http.Request) {
	k, err := newKey(r.PathValue("xname"), "", false, "xname")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeList(w, a.svc.List(k.Component))
}

// writeList answers a list of subscriptions; an empty one is
// {"SubscriptionList":null}, as HMS sends it.
func writeList(w http.ResponseWriter, subs []Subscription) {
	if len(subs) == 0 {
		subs = nil
	}
	httpserver.WriteJSON(w, http.StatusOK, SubscriptionList{SubscriptionList: subs})
}

func (a *API) deleteAgents(w http.ResponseWriter, r *http.Request) {
	k, err := newKey(r.PathValue("xname"), "", false, "xname")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if err := a.svc.Unsubscribe(r.Context(), k, true, ""); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// readV2 takes the subscription's identity from the path and its filters
// from the body.
func (a *API) readV2(w http.ResponseWriter, r *http.Request, withBody bool) (Key, Subscription, bool) {
	var sub Subscription
	k, err := NewKey(r.PathValue("xname"), r.PathValue("agent"))
	if err == nil && withBody {
		err = httpserver.ReadJSON(w, r, subscribeLimit, &sub)
	}
	if err != nil {
		a.fail(w, r, err)
		return Key{}, sub, false
	}
	sub.Subscriber, sub.SubscriberComponent, sub.SubscriberAgent = "", "", ""
	return k, sub, true
}

func (a *API) postV2(w http.ResponseWriter, r *http.Request) {
	k, sub, ok := a.readV2(w, r, true)
	if !ok {
		return
	}
	if len(sub.Components) == 0 {
		// HMS requires the list; "all" watches everything. (Our v1 still
		// takes a missing one as every component; see compatibility.md.)
		a.fail(w, r, problem.Invalidf("Subscription request missing Components array field."))
		return
	}
	if err := a.svc.Subscribe(r.Context(), k, sub); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (a *API) patchV2(w http.ResponseWriter, r *http.Request) {
	k, sub, ok := a.readV2(w, r, true)
	if !ok {
		return
	}
	if err := a.svc.Update(r.Context(), k, sub); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) deleteV2(w http.ResponseWriter, r *http.Request) {
	k, _, ok := a.readV2(w, r, false)
	if !ok {
		return
	}
	if err := a.svc.Unsubscribe(r.Context(), k, false, ""); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// scn takes an SCN from HSM (callback mode); 200 means it is durably queued.
func (a *API) scn(w http.ResponseWriter, r *http.Request) {
	if !version(w, r) {
		return
	}
	var scn hsm.SCN
	if err := httpserver.ReadJSON(w, r, scnLimit, &scn); err != nil {
		a.fail(w, r, err)
		return
	}
	if err := checkSCN(&scn); err != nil {
		a.fail(w, r, err)
		return
	}
	if _, err := a.svc.Enqueue(r.Context(), []hsm.SCN{scn}, "http"); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}
