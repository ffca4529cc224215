package heartbeat

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"

	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/redact"
	"github.com/hmsuite/hms/internal/xname"
)

// API serves the hbtd HTTP API under BasePath.
type API struct {
	svc   *Service
	log   *slog.Logger
	bufs  sync.Pool // *bytes.Buffer
	beats sync.Pool // *[]beat
}

// NewAPI returns the API of svc.
func NewAPI(svc *Service, log *slog.Logger) *API {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &API{svc: svc, log: log}
	a.bufs.New = func() any { return new(bytes.Buffer) }
	a.beats.New = func() any { s := make([]beat, 0, 1024); return &s }
	return a
}

// apiDoc holds openapi.yaml, the document of this API, served at
// /hmi/v1/openapi.yaml.
//
//go:embed openapi.yaml
var apiDoc embed.FS

// Handler returns the routes.
func (a *API) Handler() *httpserver.Mux {
	mux := httpserver.NewMux(problem.Style{})
	a.routes(mux)
	return mux
}

func (a *API) routes(mux *httpserver.Mux) {
	mux.HandleFunc("GET "+agent.BasePath+"/openapi.yaml", httpserver.OpenAPI(apiDoc, "openapi.yaml"))
	mux.HandleFunc("POST "+agent.BasePath+"/heartbeat", a.postBeat)
	mux.HandleFunc("POST "+agent.BasePath+"/heartbeat/{xname}", a.postBeatXname)
	mux.HandleFunc("POST "+agent.BasePath+"/heartbeats", a.postBeats)
	mux.HandleFunc("POST "+agent.BasePath+"/hbstates", a.postStates)
	mux.HandleFunc("GET "+agent.BasePath+"/hbstate/{xname}", a.getState)
	mux.HandleFunc("GET "+agent.BasePath+"/params", a.getParams)
	mux.HandleFunc("PATCH "+agent.BasePath+"/params", a.patchParams)
	mux.HandleFunc("GET "+agent.BasePath+"/health", a.getHealth)
	mux.HandleFunc("GET "+agent.BasePath+"/liveness", httpserver.NoContent)
	mux.HandleFunc("GET "+agent.BasePath+"/readiness", httpserver.Readiness(a.svc.Store.Ping))
	mux.HandleFunc("POST "+SCNPath, a.postSCN)
}

// readBody reads at most limit bytes of the body into a pooled buffer; the
// caller returns the buffer with a.bufs.Put when done with the bytes.
func (a *API) readBody(w http.ResponseWriter, r *http.Request, limit int64) (*bytes.Buffer, error) {
	buf := a.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		a.bufs.Put(buf)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, httpserver.DecodeError(err)
		}
		return nil, problem.Invalidf("request body: %v", err)
	}
	return buf, nil
}

func (a *API) postBeat(w http.ResponseWriter, r *http.Request) {
	a.beatOne(w, r, "")
}

func (a *API) postBeatXname(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("xname")
	if !xname.Valid(name) {
		problem.Write(w, r, a.log, problem.Invalidf("path xname: %q is not a valid xname", name))
		return
	}
	a.beatOne(w, r, xname.Normalize(name))
}

func (a *API) beatOne(w http.ResponseWriter, r *http.Request, pathName string) {
	buf, err := a.readBody(w, r, MaxBeatBody)
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	defer a.bufs.Put(buf)
	b, err := decodeBeat(buf.Bytes(), pathName)
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	a.svc.Tracker.beatOne(b)
	w.WriteHeader(http.StatusOK)
}

// postBeats is this suite's extension: a JSON array of heartbeats, for service
// nodes relaying for the compute nodes behind them. It is all or nothing: one
// bad heartbeat rejects the batch with a 400 naming its index.
func (a *API) postBeats(w http.ResponseWriter, r *http.Request) {
	buf, err := a.readBody(w, r, MaxBatchBody)
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	defer a.bufs.Put(buf)
	bp := a.beats.Get().(*[]beat)
	defer a.beats.Put(bp)
	bs, err := decodeBatch(buf.Bytes(), (*bp)[:0])
	*bp = bs[:0]
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	a.svc.Tracker.beats(bs)
	clear(bs) // drop the views into buf before the slice goes back to the pool
	w.WriteHeader(http.StatusOK)
}

func (a *API) postStates(w http.ResponseWriter, r *http.Request) {
	var req agent.HBStatesRequest
	if err := httpserver.ReadJSON(w, r, MaxQueryBody, &req); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	resp := agent.HBStatesResponse{HBStates: make([]agent.HBState, 0, len(req.XNames))}
	for i, name := range req.XNames {
		if !xname.Valid(name) {
			problem.Write(w, r, a.log, problem.Invalidf("field XNames[%d]: %q is not a valid xname", i, name))
			return
		}
		resp.HBStates = append(resp.HBStates, a.state(xname.Normalize(name)))
	}
	httpserver.WriteJSON(w, http.StatusOK, resp)
}

func (a *API) getState(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("xname")
	if !xname.Valid(name) {
		problem.Write(w, r, a.log, problem.Invalidf("path xname: %q is not a valid xname", name))
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, a.state(xname.Normalize(name)))
}

// state reports a node as heartbeating until it is declared dead: a warned node
// is still Ready in HSM.
func (a *API) state(name string) agent.HBState {
	s := a.svc.Tracker.State(name)
	return agent.HBState{XName: name, Heartbeating: s == Alive || s == Warned}
}

func (a *API) getParams(w http.ResponseWriter, r *http.Request) {
	httpserver.WriteJSON(w, http.StatusOK, a.svc.params.get())
}

func (a *API) patchParams(w http.ResponseWriter, r *http.Request) {
	var raw map[string]json.RawMessage
	if err := httpserver.ReadJSON(w, r, MaxQueryBody, &raw); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	if raw == nil {
		problem.Write(w, r, a.log, problem.Invalidf("request body: expected a JSON object of parameters"))
		return
	}
	p, err := a.svc.params.patch(r.Context(), raw)
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	a.log.Info("params_changed", "warntime", p.Warntime, "errtime", p.Errtime, "nosm", p.Nosm)
	for key := range raw {
		// Where hbtd reports to, and whether it does, are worth an
		// operator's attention: any client can change them (docs/security.md).
		if name := canonicalParam(key); name == "Sm_url" || name == "Nosm" {
			a.log.Warn("params_hsm_changed", "remote", r.RemoteAddr,
				"sm_url", redact.URL(p.Sm_url), "nosm", p.Nosm)
			break
		}
	}
	httpserver.WriteJSON(w, http.StatusOK, p)
}

func (a *API) getHealth(w http.ResponseWriter, r *http.Request) {
	httpserver.WriteJSON(w, http.StatusOK, a.svc.health(r.Context()))
}

func (s *Service) health(ctx context.Context) Health {
	h := Health{KvStore: s.Store.Kind() + " OK", MsgBus: "Not in use", HsmStatus: s.HSM.Status()}
	if err := s.Store.Ping(ctx); err != nil {
		h.KvStore = s.Store.Kind() + " error: " + err.Error()
	}
	if s.Bus != nil {
		h.MsgBus = s.Bus.Status()
	}
	if isOn(s.params.get().Nosm) {
		h.HsmStatus = "Not in use (Nosm)"
	}
	return h
}
