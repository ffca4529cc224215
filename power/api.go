package power

import (
	"context"
	_ "embed"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
)

//go:embed openapi.yaml
var apiDoc []byte

// Base is the versioned API base; every route is also served without it,
// as PCS does.
const Base = "/v1"

// API serves the PCS routes and the CAPMC front.
type API struct {
	svc   *Service
	log   *slog.Logger
	ready []httpserver.ReadyFunc
	// bufs recycles the chunk buffers power-status answers are encoded
	// into (statusChunk).
	bufs sync.Pool
}

// NewAPI returns the HTTP API over svc; ready are readiness checks.
func NewAPI(svc *Service, log *slog.Logger, ready ...httpserver.ReadyFunc) *API {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &API{svc: svc, log: log, ready: ready}
}

// style: PCS's problems carry no instance (its Problem7807 leaves it empty).
var style = problem.Style{NoInstance: true}

// Handler returns the router.
func (a *API) Handler() http.Handler {
	mux := httpserver.NewMux(style)
	for _, p := range []string{"", Base} {
		mux.HandleFunc("GET "+p+"/{$}", a.index)
		mux.HandleFunc("GET "+p+"/transitions", a.listTransitions)
		mux.HandleFunc("POST "+p+"/transitions", a.createTransition)
		mux.HandleFunc("GET "+p+"/transitions/{id}", a.getTransition)
		mux.HandleFunc("DELETE "+p+"/transitions/{id}", a.abortTransition)
		mux.HandleFunc("GET "+p+"/power-status", a.getPowerStatus)
		mux.HandleFunc("POST "+p+"/power-status", a.postPowerStatus)
		mux.HandleFunc("POST "+p+"/power-cap/snapshot", a.capSnapshot)
		mux.HandleFunc("PATCH "+p+"/power-cap", a.capPatch)
		mux.HandleFunc("GET "+p+"/power-cap", a.listCaps)
		mux.HandleFunc("GET "+p+"/power-cap/{id}", a.getCap)
		mux.HandleFunc("GET "+p+"/liveness", httpserver.NoContent)
		mux.HandleFunc("GET "+p+"/readiness", httpserver.Readiness(a.ready...))
		mux.HandleFunc("GET "+p+"/health", a.health)
		mux.HandleFunc("GET "+p+"/openapi.yaml", serveDoc)
	}
	a.capmcRoutes(mux)
	return mux
}

func serveDoc(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(apiDoc)
}

func (a *API) index(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("hms-power-control"))
}

// health answers PCS's health body. The key-value store and the
// distributed lock are pcs's database; Vault is not used.
func (a *API) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	kv := "connected, responsive"
	if err := a.svc.store.Ping(ctx); err != nil {
		kv = "connected, not responsive"
	}
	sm := "connected, responsive"
	if err := a.svc.hsm.Ready(ctx); err != nil {
		sm = "connected, not responsive"
	}
	httpserver.WriteJSON(w, http.StatusOK, map[string]string{"KvStore": kv, "DistLocking": kv, "StateManager": sm,
		"Vault": "disabled", "TaskRunner": "connected, responsive, local mode"})
}

// parseID checks a path UUID with google/uuid, whose error texts PCS sends.
func parseID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if _, err := uuid.Parse(id); err != nil {
		problem.WriteStatus(w, r, http.StatusBadRequest, err.Error())
		return "", false
	}
	return id, true
}
