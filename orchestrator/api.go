package orchestrator

import (
	"context"
	_ "embed"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
)

//go:embed openapi.yaml
var apiDoc []byte

func serveDoc(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(apiDoc)
}

// Base is BOS v2's path prefix; the gateway serves it under /apis/bos.
const Base = "/v2"

// APIVersion is the BOS API version this package speaks.
var APIVersion = Version{Major: "2", Minor: "0", Patch: "0"}

// Version is the body of GET /v2 and /v2/version.
type Version struct {
	Major string `json:"major"`
	Minor string `json:"minor"`
	Patch string `json:"patch"`
	Links []Link `json:"links,omitempty"`
}

// API serves BOS v2.
type API struct {
	svc *Service
	log *slog.Logger
}

// NewAPI returns the HTTP API over svc.
func NewAPI(svc *Service, log *slog.Logger) *API {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &API{svc: svc, log: log}
}

// style: BOS's problems come from connexion: no instance, and the spec's
// titles for 404, 500 and 503.
var style = problem.Style{NoInstance: true, Titles: map[int]string{
	http.StatusNotFound:            "The resource was not found",
	http.StatusInternalServerError: "An Internal Server Error occurred handling the request",
}}

// Handler returns the router.
func (a *API) Handler() http.Handler {
	m := httpserver.NewMux(style)
	m.HandleFunc("GET /{$}", a.versions)
	m.HandleFunc("GET /v2", a.version)
	m.HandleFunc("GET /v2/version", a.version)
	m.HandleFunc("GET /v2/healthz", a.healthz)
	m.HandleFunc("GET /v2/sessiontemplates", a.listTemplates)
	m.HandleFunc("GET /v2/sessiontemplates/{id}", a.getTemplate)
	m.HandleFunc("PUT /v2/sessiontemplates/{id}", a.putTemplate)
	m.HandleFunc("PATCH /v2/sessiontemplates/{id}", a.patchTemplate)
	m.HandleFunc("DELETE /v2/sessiontemplates/{id}", a.deleteTemplate)
	m.HandleFunc("GET /v2/sessiontemplatesvalid/{id}", a.validateTemplate)
	m.HandleFunc("GET /v2/sessiontemplatetemplate", a.exampleTemplate)
	m.HandleFunc("POST /v2/sessions", a.createSession)
	m.HandleFunc("GET /v2/sessions", a.listSessions)
	m.HandleFunc("DELETE /v2/sessions", a.deleteSessions)
	m.HandleFunc("GET /v2/sessions/{id}", a.getSession)
	m.HandleFunc("PATCH /v2/sessions/{id}", a.patchSession)
	m.HandleFunc("DELETE /v2/sessions/{id}", a.deleteSession)
	m.HandleFunc("GET /v2/sessions/{id}/status", a.sessionStatus)
	m.HandleFunc("POST /v2/sessions/{id}/status", a.saveSessionStatus)
	m.HandleFunc("GET /v2/components", a.listComponents)
	m.HandleFunc("PUT /v2/components", a.putComponents)
	m.HandleFunc("PATCH /v2/components", a.patchComponents)
	m.HandleFunc("GET /v2/components/{id}", a.getComponent)
	m.HandleFunc("PUT /v2/components/{id}", a.putComponent)
	m.HandleFunc("PATCH /v2/components/{id}", a.patchComponent)
	m.HandleFunc("DELETE /v2/components/{id}", a.deleteComponent)
	m.HandleFunc("POST /v2/applystaged", a.applyStaged)
	m.HandleFunc("GET /v2/options", a.getOptions)
	m.HandleFunc("PATCH /v2/options", a.patchOptions)
	m.HandleFunc("POST "+SCNPath, a.scn)
	m.HandleFunc("GET "+Base+"/openapi.yaml", serveDoc)
	return m
}

// GatewayPrefixes are the paths the CSM API gateway serves bos under.
func GatewayPrefixes() []httpserver.Prefix {
	return []httpserver.Prefix{{Gateway: "/apis/bos" + Base, Base: Base}}
}

func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	problem.Write(w, r, a.log, err)
}

// conflict writes a 409 with the spec's title for the route.
func conflict(w http.ResponseWriter, err error, title string) {
	problem.WriteDetails(w, problem.Details{Type: "about:blank", Title: title, Detail: err.Error(),
		Status: http.StatusConflict})
}

// body reads a request body for the handlers that decode it themselves.
func body(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<20))
	if err != nil {
		return nil, httpserver.DecodeError(err)
	}
	return b, nil
}

func (a *API) versions(w http.ResponseWriter, r *http.Request) {
	v := APIVersion
	v.Links = []Link{{Href: Base, Rel: "self"}}
	httpserver.WriteJSON(w, http.StatusOK, []Version{v})
}

func (a *API) version(w http.ResponseWriter, r *http.Request) {
	v := APIVersion
	v.Links = []Link{{Href: r.URL.Path, Rel: "self"}}
	httpserver.WriteJSON(w, http.StatusOK, v)
}

// healthz answers BOS's health body; the database is bos's SQLite file or
// PostgreSQL database.
func (a *API) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := a.svc.store.Ping(ctx); err != nil {
		a.log.WarnContext(ctx, "healthz_db_unavailable", "err", err)
		httpserver.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"dbStatus": "not_available", "apiStatus": "ok"})
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, map[string]string{"dbStatus": "ok", "apiStatus": "ok"})
}

func (a *API) getOptions(w http.ResponseWriter, _ *http.Request) {
	httpserver.WriteJSON(w, http.StatusOK, a.svc.Options())
}

func (a *API) patchOptions(w http.ResponseWriter, r *http.Request) {
	var p map[string]any
	if err := httpserver.ReadJSON(w, r, 0, &p); err != nil {
		a.fail(w, r, err)
		return
	}
	out, err := a.svc.PatchOptions(r.Context(), p)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, out)
}

func isConflict(err error) bool { return errors.Is(err, problem.ErrConflict) }
