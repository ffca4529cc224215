package ipxe

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/ipxe/bss"
)

// Base is the path prefix of the BSS API.
const Base = bss.Base

// API serves the BSS REST API and the cloud-init endpoints over a Service.
type API struct {
	svc     *Service
	leases  LeaseReader // nil: no DHCP server
	log     *slog.Logger
	version string
	// style is hms-bss's problem shape: hms-base's, without instance.
	style problem.Style
	// textPlain is the bootscript's Content-Type value, made once (net/http
	// only reads a header's values).
	textPlain []string
	// scripts are the buffers boot scripts are rendered into (*[]byte).
	scripts sync.Pool
}

// NewAPI returns the API for svc; version is what /service/version reports;
// leases are the DHCP server's (nil when bss runs none).
func NewAPI(svc *Service, leases LeaseReader, log *slog.Logger, version string) *API {
	a := &API{svc: svc, leases: leases, log: log, version: version, style: problem.Style{NoInstance: true},
		textPlain: []string{"text/plain; charset=UTF-8"}}
	a.scripts.New = func() any { b := make([]byte, 0, 1024); return &b }
	return a
}

// apiDoc holds openapi.yaml, the document of this API, served at
// /boot/v1/openapi.yaml.
//
//go:embed openapi.yaml
var apiDoc embed.FS

// Handler returns the routed API.
func (a *API) Handler() http.Handler {
	mux := httpserver.NewMux(a.style)
	a.routes(mux)
	return mux
}

// routes registers every route, one line each. hms-bss switches on the
// method inside each handler, so a known path with another method is a 405
// problem naming the allowed ones; the catch-all rows say so.
func (a *API) routes(mux *httpserver.Mux) {
	const bp = Base + "/bootparameters"
	mux.HandleFunc("GET "+Base+"/openapi.yaml", httpserver.OpenAPI(apiDoc, "openapi.yaml"))
	mux.HandleFunc(Base+"/openapi.yaml", a.notAllowed("GET"))
	mux.HandleFunc("GET "+bp, a.getParams)
	mux.HandleFunc("POST "+bp, a.postParams)
	mux.HandleFunc("PUT "+bp, a.putParams)
	mux.HandleFunc("PATCH "+bp, a.patchParams)
	mux.HandleFunc("DELETE "+bp, a.deleteParams)
	mux.HandleFunc(bp, a.notAllowed("GET,PUT,POST,PATCH,DELETE"))
	mux.HandleFunc("GET "+Base+"/bootscript", a.bootscript)
	mux.HandleFunc(Base+"/bootscript", a.notAllowed("GET"))
	mux.HandleFunc("GET "+Base+"/hosts", a.getHosts)
	mux.HandleFunc("POST "+Base+"/hosts", a.postHosts)
	mux.HandleFunc(Base+"/hosts", a.notAllowed("GET,POST"))
	mux.HandleFunc("GET "+Base+"/dumpstate", a.dumpstate)
	mux.HandleFunc(Base+"/dumpstate", a.notAllowed("GET"))
	mux.HandleFunc("GET "+Base+"/endpoint-history", a.endpointHistory)
	mux.HandleFunc(Base+"/endpoint-history", a.notAllowed("GET"))
	mux.HandleFunc("GET "+Base+"/dhcp/leases", a.dhcpLeases)
	mux.HandleFunc(Base+"/dhcp/leases", a.notAllowed("GET"))
	mux.HandleFunc("POST "+Base+"/scn", a.scn)
	mux.HandleFunc(Base+"/scn", a.notAllowed("POST"))
	mux.HandleFunc("GET "+Base+"/node-token", a.nodeTokenRoute)
	mux.HandleFunc(Base+"/node-token", a.notAllowed("GET"))
	mux.HandleFunc("GET "+Base+"/node-jwks", a.nodeJWKS)
	mux.HandleFunc(Base+"/node-jwks", a.notAllowed("GET"))
	mux.HandleFunc("GET "+Base+"/service/", a.service)
	mux.HandleFunc(Base+"/service/", a.notAllowed("GET"))
	mux.HandleFunc("GET /meta-data", a.metaData)
	mux.HandleFunc("/meta-data", a.notAllowed("GET"))
	mux.HandleFunc("GET /user-data", a.userData)
	mux.HandleFunc("/user-data", a.notAllowed("GET"))
	mux.HandleFunc("POST /phone-home", a.phoneHome)
	mux.HandleFunc("/phone-home", a.notAllowed("POST"))
	mux.HandleFunc(Base+"/", helloWorld)
}

// notAllowed answers a method a path does not take, as hms-bss does.
func (a *API) notAllowed(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		a.style.WriteStatus(w, r, http.StatusMethodNotAllowed, "allow "+allow)
	}
}

// helloWorld is hms-bss's answer to any other path under /boot/v1/.
func helloWorld(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("Hello World!"))
}

// jsonType is the Content-Type of hms-bss's JSON answers.
const jsonType = "application/json; charset=UTF-8"

// writeJSON sends v as hms-bss does (json.Encoder, so a trailing newline).
func writeJSON(w http.ResponseWriter, status int, ctype string, v any) {
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeEmpty sends a bodiless success.
func writeEmpty(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", jsonType)
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(status)
}

// readBody reads a request body of at most httpserver.DefaultBodyLimit bytes.
// A body over the limit is a 413 and one that does not arrive within the
// server's read deadline a 408, as on every daemon of the suite (hms-bss had
// neither limit); any other read error is a 400 whose detail is format
// applied to it (the handler's hms-bss text).
func readBody(w http.ResponseWriter, r *http.Request, format string) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, httpserver.DefaultBodyLimit)); err != nil {
		if kinded := httpserver.DecodeError(err); problem.Status(kinded) != http.StatusBadRequest {
			return nil, kinded
		}
		return nil, problem.Invalidf(format, err)
	}
	return buf.Bytes(), nil
}

// decodeStrict decodes one JSON value from b into v, with the error texts
// hms-bss's json.Decoder gives ("EOF" for an empty body, Go's syntax and type
// errors), but strictly like every daemon of the suite: httpserver.CheckJSON
// first (invalid UTF-8, a key given twice, also in another case), and bytes
// after the value refused with encoding/json's own "after top-level value"
// text. hms-bss ignored trailing bytes and kept the last duplicate; the suite
// refuses what it would otherwise read one way and a later reader another.
// Unknown fields stay ignored, as in hms-bss and the other daemons.
func decodeStrict(b []byte, v any) error {
	if err := httpserver.CheckJSON(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if len(bytes.TrimLeft(b[dec.InputOffset():], " \t\r\n")) == 0 {
		return nil
	}
	var raw json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	return errors.New("unexpected data after the JSON value")
}

func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	a.style.Write(w, r, a.log, err)
}

// listParam is a comma-separated query parameter, repeats joined.
func listParam(q url.Values, name string) []string {
	var out []string
	for _, v := range q[name] {
		for _, p := range strings.Split(v, ",") {
			if p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// parseNIDs parses NIDs as hms-bss does (strconv base 0: 0x.. and 0.. too).
func parseNIDs(vals []string) ([]int32, error) {
	out := make([]int32, 0, len(vals))
	for _, v := range vals {
		n, err := strconv.ParseInt(v, 0, 32)
		if err != nil {
			return nil, problem.Invalidf("Bad Request - Invalid nid '%s'", v)
		}
		out = append(out, int32(n))
	}
	return out, nil
}
