package nodes

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/nodes/wire"
)

// Base is the nodes API's path prefix.
const Base = "/nodes/v1"

// applyLimit caps an apply's body: a 10,000-node set is a few MiB.
const applyLimit = 256 << 20

// collections maps each URL collection to its kind.
var collections = []struct{ path, kind string }{
	{"/computenodes", wire.KindComputeNode},
	{"/bootprofiles", wire.KindBootProfile},
	{"/nodegroups", wire.KindNodeGroup},
}

// API serves the nodes API.
type API struct {
	svc   *Service
	log   *slog.Logger
	ready []httpserver.ReadyFunc
}

// NewAPI returns the HTTP API over svc; ready are the readiness checks.
func NewAPI(svc *Service, log *slog.Logger, ready ...httpserver.ReadyFunc) *API {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &API{svc: svc, log: log, ready: ready}
}

// Handler returns the router.
func (a *API) Handler() http.Handler {
	m := httpserver.NewMux(problem.Style{})
	m.HandleFunc("GET "+Base+"/liveness", httpserver.NoContent)
	m.HandleFunc("GET "+Base+"/readiness", httpserver.Readiness(a.ready...))
	m.HandleFunc("POST "+Base+"/apply", a.apply)
	for _, c := range collections {
		m.HandleFunc("GET "+Base+c.path, a.list(c.kind))
		m.HandleFunc("GET "+Base+c.path+"/{name}", a.get(c.kind))
		m.HandleFunc("PUT "+Base+c.path+"/{name}", a.put(c.kind))
		m.HandleFunc("DELETE "+Base+c.path+"/{name}", a.del(c.kind))
	}
	return m
}

func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, ErrPrecondition) {
		problem.WriteStatus(w, r, http.StatusPreconditionFailed, err.Error())
		return
	}
	problem.Write(w, r, a.log, err)
}

func (a *API) apply(w http.ResponseWriter, r *http.Request) {
	var req wire.ApplyRequest
	if err := httpserver.ReadJSON(w, r, applyLimit, &req); err != nil {
		a.fail(w, r, err)
		return
	}
	plan, err := a.svc.Apply(r.Context(), req)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, plan)
}

func (a *API) list(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f := Filter{Xnames: splitList(q["xname"]), Groups: splitList(q["group"]), Arch: q.Get("arch"),
			MAC: q.Get("mac"), Names: splitList(q["name"])}
		for i, x := range f.Xnames {
			f.Xnames[i] = strings.ToLower(x)
		}
		items, err := a.svc.List(r.Context(), kind, f)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		httpserver.WriteJSON(w, http.StatusOK, bodies(items))
	}
}

// bodies are the items' resources without their kind, as a JSON array.
func bodies(items []Item) []any {
	out := make([]any, 0, len(items))
	for _, it := range items {
		out = append(out, body(it.Resource))
	}
	return out
}

func body(r wire.Resource) any {
	switch {
	case r.ComputeNode != nil:
		return r.ComputeNode
	case r.BootProfile != nil:
		return r.BootProfile
	}
	return r.NodeGroup
}

func (a *API) get(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		it, err := a.svc.Get(r.Context(), kind, pathName(kind, r))
		if err != nil {
			a.fail(w, r, err)
			return
		}
		w.Header().Set("ETag", it.ETag)
		httpserver.WriteJSON(w, http.StatusOK, body(it.Resource))
	}
}

func (a *API) put(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		res, err := readResource(w, r, kind)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		it, created, err := a.svc.Put(r.Context(), res, r.Header.Get("If-Match"), nil)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		w.Header().Set("ETag", it.ETag)
		status := http.StatusOK
		if created {
			status = http.StatusCreated
		}
		httpserver.WriteJSON(w, status, body(it.Resource))
	}
}

// readResource decodes a PUT body of kind; its name, when given, must be
// the path's.
func readResource(w http.ResponseWriter, r *http.Request, kind string) (wire.Resource, error) {
	res := wire.Resource{Kind: kind}
	var dst any
	switch kind {
	case wire.KindComputeNode:
		res.ComputeNode = new(wire.ComputeNode)
		dst = res.ComputeNode
	case wire.KindBootProfile:
		res.BootProfile = new(wire.BootProfile)
		dst = res.BootProfile
	default:
		res.NodeGroup = new(wire.NodeGroup)
		dst = res.NodeGroup
	}
	if err := httpserver.ReadJSON(w, r, 0, dst); err != nil {
		return res, err
	}
	name := pathName(kind, r)
	switch {
	case res.ComputeNode != nil && res.ComputeNode.Xname == "":
		res.ComputeNode.Xname = name
	case res.BootProfile != nil && res.BootProfile.Name == "":
		res.BootProfile.Name = name
	case res.NodeGroup != nil && res.NodeGroup.Name == "":
		res.NodeGroup.Name = name
	}
	if got := strings.ToLower(res.Name()); got != name {
		return res, problem.Invalidf("%s %q: the body names %q", kind, name, res.Name())
	}
	return res, nil
}

func (a *API) del(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := a.svc.Delete(r.Context(), kind, pathName(kind, r), r.Header.Get("If-Match")); err != nil {
			a.fail(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

// pathName is the {name} of the path; xnames are compared lowercase.
func pathName(kind string, r *http.Request) string {
	n := r.PathValue("name")
	if kind == wire.KindComputeNode {
		return strings.ToLower(n)
	}
	return n
}

// splitList flattens repeated and comma-separated query values.
func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}
