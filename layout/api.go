package layout

import (
	"embed"
	"log/slog"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
)

// apiDoc holds openapi.yaml, the document of this API, served at
// /v1/openapi.yaml.
//
//go:embed openapi.yaml
var apiDoc embed.FS

// BodyLimit caps the body of a hardware or network write.
const BodyLimit = 1 << 20

// DefaultDumpLimit caps a /loadstate upload unless API.DumpLimit says otherwise;
// a 100,000-node system dumps to about 100 MB.
const DefaultDumpLimit = 1 << 30

// API serves the SLS REST API over a Store.
type API struct {
	store *Store
	log   *slog.Logger
	bufs  sync.Pool
	// DumpLimit caps the size of a /loadstate body in bytes.
	DumpLimit int64
}

// NewAPI returns the API for store and registers its gauges on reg.
func NewAPI(store *Store, log *slog.Logger, reg prometheus.Registerer) *API {
	a := &API{store: store, log: log, DumpLimit: DefaultDumpLimit}
	a.bufs.New = func() any { b := make([]byte, 0, 4096); return &b }
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sls_hardware_objects", Help: "Hardware objects stored in SLS."},
			func() float64 { return float64(store.HardwareCount()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sls_version_counter", Help: "The SLS change counter served by /version."},
			func() float64 { return float64(store.Version().Counter) }),
	)
	return a
}

// Handler returns the routed API.
func (a *API) Handler() *httpserver.Mux {
	mux := httpserver.NewMux(problem.Style{})
	a.routes(mux)
	return mux
}

func (a *API) routes(mux *httpserver.Mux) {
	mux.HandleFunc("GET "+Base+"/openapi.yaml", httpserver.OpenAPI(apiDoc, "openapi.yaml"))
	mux.HandleFunc("GET "+Base+"/health", a.health)
	mux.HandleFunc("GET "+Base+"/liveness", httpserver.NoContent)
	mux.Handle("GET "+Base+"/readiness", httpserver.Readiness(a.store.Ping))
	mux.HandleFunc("GET "+Base+"/version", a.version)
	mux.HandleFunc("GET "+Base+"/hardware", a.listHardware)
	mux.HandleFunc("POST "+Base+"/hardware", a.createHardware)
	mux.HandleFunc("GET "+Base+"/hardware/{xname}", a.getHardware)
	mux.HandleFunc("PUT "+Base+"/hardware/{xname}", a.putHardware)
	mux.HandleFunc("DELETE "+Base+"/hardware/{xname}", a.deleteHardware)
	mux.HandleFunc("PUT "+Base+"/bulk/hardware", a.putHardwareBulk)
	mux.HandleFunc("GET "+Base+"/search/hardware", a.searchHardware)
	mux.HandleFunc("GET "+Base+"/networks", a.listNetworks)
	mux.HandleFunc("POST "+Base+"/networks", a.createNetwork)
	mux.HandleFunc("GET "+Base+"/networks/{network}", a.getNetwork)
	mux.HandleFunc("PUT "+Base+"/networks/{network}", a.putNetwork)
	mux.HandleFunc("PATCH "+Base+"/networks/{network}", a.patchNetwork)
	mux.HandleFunc("DELETE "+Base+"/networks/{network}", a.deleteNetwork)
	mux.HandleFunc("GET "+Base+"/search/networks", a.searchNetworks)
	mux.HandleFunc("GET "+Base+"/dumpstate", a.dumpState)
	mux.HandleFunc("POST "+Base+"/loadstate", a.loadState)
}

func (a *API) health(w http.ResponseWriter, r *http.Request) {
	if err := a.store.Ping(r.Context()); err != nil {
		httpserver.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"Vault": "Not checked", "DBConnection": "Not Ready"})
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, map[string]string{"Vault": "Not checked", "DBConnection": "Ready"})
}

func (a *API) version(w http.ResponseWriter, r *http.Request) {
	httpserver.WriteJSON(w, http.StatusOK, a.store.Version())
}

// render sends the JSON that fill appends to a pooled buffer, or the problem
// missing returns when fill reports there was nothing to send. Buffers that
// grew past 1 MiB (a large search) are left to the garbage collector.
func (a *API) render(w http.ResponseWriter, r *http.Request, status int, fill func([]byte) ([]byte, bool), missing func() error) {
	bp := a.bufs.Get().(*[]byte)
	b, ok := fill((*bp)[:0])
	if ok {
		b = append(b, '\n') // as json.Encoder ends every answer
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(b)
	} else {
		a.hardwareFail(w, r, missing())
	}
	if cap(b) <= 1<<20 {
		*bp = b
		a.bufs.Put(bp)
	}
}

// hardwareFail answers a failed /hardware request. The shipped SLS sends
// these problems without instance (its other routes set one).
func (a *API) hardwareFail(w http.ResponseWriter, r *http.Request, err error) {
	problem.Style{NoInstance: true}.Write(w, r, a.log, err)
}

// pathXname parses the {xname} path segment; the error names it.
func pathXname(r *http.Request) (string, error) {
	x, err := xname.Parse(r.PathValue("xname"))
	if err != nil {
		return "", mark(problem.Invalidf("path xname: %v", err), failXname, r.PathValue("xname"))
	}
	return x.String(), nil
}

func (a *API) getHardware(w http.ResponseWriter, r *http.Request) {
	x, err := pathXname(r)
	if err != nil {
		a.hardwareFail(w, r, getHardwareTexts().apply(err))
		return
	}
	a.render(w, r, http.StatusOK, func(b []byte) ([]byte, bool) { return a.store.AppendHardware(b, x) },
		func() error {
			return getHardwareTexts().apply(mark(problem.NotFoundf("hardware %s not found", x), failNoHardware, x))
		})
}

func (a *API) listHardware(w http.ResponseWriter, r *http.Request) {
	a.writeResults(w, a.store.allResults())
}

func (a *API) searchHardware(w http.ResponseWriter, r *http.Request) {
	q, err := ParseHardwareSearch(r.URL.RawQuery)
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	// No match answers 200 null, as shipped SLS does (its 404 "Hardware not
	// found in DB" is unreachable; the spec's 404 is not what clients see).
	a.writeResults(w, a.store.searchResults(q))
}

// writeResults sends res as a JSON array, rendered in chunks so that a
// 100,000-object answer needs neither a 25 MB buffer nor the read lock. An
// empty result is null, as shipped SLS marshals its nil slice.
func (a *API) writeResults(w http.ResponseWriter, res results) {
	w.Header().Set("Content-Type", "application/json")
	if len(res.entries) == 0 {
		_, _ = w.Write([]byte("null\n"))
		return
	}
	bp := a.bufs.Get().(*[]byte)
	cw := chunkWriter{w: w, b: (*bp)[:0]}
	cw.b = append(cw.b, '[')
	for i, e := range res.entries {
		if i > 0 {
			cw.b = append(cw.b, ',')
		}
		cw.b = appendEntry(cw.b, e, res.kids[i], a.store.redact)
		cw.flushIfFull()
	}
	cw.b = append(cw.b, ']', '\n')
	_ = cw.flush()
	if cap(cw.b) <= 1<<20 {
		*bp = cw.b
		a.bufs.Put(bp)
	}
}

// renderHardware answers a successful write with the stored object x.
func (a *API) renderHardware(w http.ResponseWriter, r *http.Request, status int, x string) {
	a.render(w, r, status, func(b []byte) ([]byte, bool) { return a.store.AppendHardware(b, x) },
		func() error { return problem.NotFoundf("hardware %s was deleted meanwhile", x) })
}

func (a *API) putHardware(w http.ResponseWriter, r *http.Request) {
	fail := func(err error) { a.hardwareFail(w, r, putHardwareTexts().apply(err)) }
	x, err := pathXname(r)
	if err != nil {
		fail(err)
		return
	}
	var h Hardware
	if err := readBody(w, r, &h); err != nil {
		fail(err)
		return
	}
	if h.Xname != "" && xname.Normalize(h.Xname) != x {
		fail(problem.Invalidf("Xname %q in the body does not match %s in the path", h.Xname, x))
		return
	}
	h.Xname = x
	created, err := a.store.PutHardware(r.Context(), h)
	if err != nil {
		fail(err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	a.renderHardware(w, r, status, x)
}

// BulkLimit caps the body of PUT /bulk/hardware.
const BulkLimit = 64 << 20

// putHardwareBulk serves the extension PUT /bulk/hardware: a JSON array of
// hardware objects, each created or replaced, in one transaction; all or
// nothing, 204. Shipped SLS has no bulk write but /loadstate, which
// replaces everything: a client adding many objects (`hms apply`) would
// otherwise send one request, and pay one commit, per object.
func (a *API) putHardwareBulk(w http.ResponseWriter, r *http.Request) {
	var hs []Hardware
	err := httpserver.ReadJSON(w, r, BulkLimit, &hs)
	if err == nil {
		_, err = a.store.PutHardwareAll(r.Context(), hs)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) createHardware(w http.ResponseWriter, r *http.Request) {
	fail := func(err error) { a.hardwareFail(w, r, postHardwareTexts().apply(err)) }
	var h Hardware
	if err := readBody(w, r, &h); err != nil {
		fail(err)
		return
	}
	if h.Xname == "" {
		fail(mark(problem.Invalidf("Xname: missing"), failNoXname, ""))
		return
	}
	if err := a.store.CreateHardware(r.Context(), h); err != nil {
		fail(err)
		return
	}
	x := xname.Normalize(h.Xname)
	a.renderHardware(w, r, http.StatusCreated, x)
}

func (a *API) deleteHardware(w http.ResponseWriter, r *http.Request) {
	fail := func(err error) { a.hardwareFail(w, r, getHardwareTexts().apply(err)) }
	x, err := pathXname(r)
	if err != nil {
		fail(err)
		return
	}
	deleted, err := a.store.DeleteHardware(r.Context(), x)
	if err != nil {
		fail(err)
		return
	}
	a.log.InfoContext(r.Context(), "hardware_deleted", "xname", x, "objects", len(deleted))
	w.WriteHeader(http.StatusOK)
}
