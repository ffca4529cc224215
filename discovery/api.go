package discovery

import (
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/hmsuite/hms/discovery/wire"
	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/ipxe/lease"
)

// Base is the path prefix of the REDS API.
const Base = "/v1"

// apiDoc holds openapi.yaml, served at /v1/openapi.yaml.
//
//go:embed openapi.yaml
var apiDoc embed.FS

// API serves the REDS routes over a Service.
type API struct {
	svc   *Service
	store *Store
	log   *slog.Logger
	// token authenticates the node-side routes (POST /credentials, PUT
	// /discovery); empty: they are refused.
	token string
}

// NewAPI returns the API of svc; token is the discovery token BSS puts on
// the discovery image's kernel command line.
func NewAPI(svc *Service, store *Store, log *slog.Logger, token string) *API {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &API{svc: svc, store: store, log: log, token: token}
}

// Handler returns the routed API.
func (a *API) Handler() http.Handler {
	mux := httpserver.NewMux(problem.Style{})
	a.routes(mux)
	return mux
}

func (a *API) routes(mux *httpserver.Mux) {
	mux.HandleFunc("GET "+Base+"/openapi.yaml", httpserver.OpenAPI(apiDoc, "openapi.yaml"))
	mux.HandleFunc("GET "+Base+"/liveness", httpserver.NoContent)
	mux.HandleFunc("GET "+Base+"/readiness", httpserver.Readiness(a.store.Ping))
	mux.HandleFunc("GET "+Base+"/unknown", a.getUnknown)
	mux.HandleFunc("GET "+Base+"/endpoints", a.getEndpoints)
	mux.HandleFunc("DELETE "+Base+"/endpoints/{xname}/tls-key", a.deleteTLSKey)
	mux.HandleFunc("POST "+Base+"/credentials", a.authorized(a.postCredentials))
	mux.HandleFunc("PUT "+Base+"/discovery", a.authorized(a.putDiscovery))
}

func (a *API) getUnknown(w http.ResponseWriter, r *http.Request) {
	// ?deferred=true adds the MACs on no switch still in their grace.
	deferred := r.URL.Query().Get("deferred") == "true"
	httpserver.WriteJSON(w, http.StatusOK, wire.UnknownList{Unknown: a.svc.unknowns(deferred)})
}

// endpointView is an endpoint as GET /v1/endpoints shows it: never a password.
type endpointView = wire.Endpoint

func (a *API) getEndpoints(w http.ResponseWriter, r *http.Request) {
	eps, err := a.store.List(r.Context(), r.URL.Query().Get("state"))
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	out := make([]endpointView, 0, len(eps))
	for _, e := range eps {
		out = append(out, endpointView{Xname: e.Xname, Kind: e.Kind, MACAddress: e.MAC, IPAddress: e.IP,
			FQDN: e.Addr, User: e.User, State: e.State, Updated: e.Updated})
	}
	httpserver.WriteJSON(w, http.StatusOK, wire.EndpointList{Endpoints: out})
}

// deleteTLSKey forgets the TLS key pinned for a BMC whose key really
// changed (a new certificate, a replaced BMC): the next presence check at
// its registered address, or its next registration, pins the one it
// presents then. Beside the route table (admin only), the
// handler refuses any caller the token guard did not authenticate as
// admin: with tokens off every route is open, and anyone clearing the pin
// could have a device spoofing the BMC's MAC sent its password.
func (a *API) deleteTLSKey(w http.ResponseWriter, r *http.Request) {
	p, ok := auth.FromContext(r.Context())
	if !ok || !p.Has(auth.Admin) {
		problem.WriteStatus(w, r, http.StatusForbidden,
			"a BMC's pinned TLS key is cleared only for a caller holding an admin token (reds must check tokens)")
		return
	}
	x := xname.Normalize(r.PathValue("xname"))
	if err := a.store.ClearKey(r.Context(), x); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	a.log.Info("bmc_tls_key_cleared", "xname", x, "by", p.Subject)
	w.WriteHeader(http.StatusNoContent)
}

// authorized lets a request through only with "Authorization: Bearer
// <token>", the discovery token; without a configured token the node-side
// routes are closed. When the suite checks JWTs, the caller of a valid one
// (the guard put it in the context) may pass instead: an admin, or a node
// token for the MACs of its own BMC (readAddresses checks them).
func (a *API) authorized(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if p, ok := auth.FromContext(r.Context()); ok && (p.Has(auth.Admin) || p.Has(auth.Node)) {
			next(w, r)
			return
		}
		if a.token == "" {
			problem.WriteStatus(w, r, http.StatusForbidden, "the node-side discovery routes are off (no -discovery-token-file)")
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(a.token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="reds"`)
			problem.WriteStatus(w, r, http.StatusUnauthorized, "a valid discovery token is required")
			return
		}
		next(w, r)
	}
}

// systemAddresses is the body the discovery image sends (hms-reds 1.x).
type systemAddresses struct {
	Addresses []struct {
		MACAddress  string `json:"macAddress"`
		IPAddresses []struct {
			AddressType string `json:"addressType"`
			Address     string `json:"address"`
		} `json:"IPAddresses"`
	} `json:"addresses"`
}

func (a *API) readAddresses(w http.ResponseWriter, r *http.Request) (systemAddresses, bool) {
	var body systemAddresses
	if err := httpserver.ReadJSON(w, r, 64<<10, &body); err != nil {
		problem.Write(w, r, a.log, err)
		return body, false
	}
	if len(body.Addresses) == 0 {
		problem.Write(w, r, a.log, problem.Invalidf("addresses: none"))
		return body, false
	}
	for _, ad := range body.Addresses {
		if _, err := net.ParseMAC(macColons(ad.MACAddress)); err != nil {
			problem.Write(w, r, a.log, problem.Invalidf("addresses: macAddress %q is not a MAC address", ad.MACAddress))
			return body, false
		}
	}
	if err := a.ownMACs(r, body); err != nil {
		problem.WriteStatus(w, r, http.StatusForbidden, err.Error())
		return body, false
	}
	return body, true
}

// ownMACs checks that a node token's request names only MACs reds knows as
// its own BMC's (the node's xname's parent): the credentials are that BMC's.
// Any other caller passed authorized already.
func (a *API) ownMACs(r *http.Request, body systemAddresses) error {
	p, ok := auth.FromContext(r.Context())
	if !ok || p.Has(auth.Admin) || !p.Has(auth.Node) {
		return nil
	}
	node, err := xname.Parse(p.Subject)
	if err != nil {
		return fmt.Errorf("node token of %q", p.Subject)
	}
	bmc, _ := node.Parent()
	for _, ad := range body.Addresses {
		mac := lease.NormalizeMAC(macColons(ad.MACAddress))
		ep, err := a.store.ByMAC(r.Context(), mac)
		if err != nil || !strings.EqualFold(ep.Xname, bmc.String()) {
			return fmt.Errorf("a node token may name the MACs of its own BMC %s only, not %s", bmc, ad.MACAddress)
		}
	}
	return nil
}

// macColons accepts a MAC with or without separators (hms-reds sends bare hex).
func macColons(m string) string {
	m = strings.ToLower(m)
	if len(m) != 12 || strings.ContainsAny(m, ":-.") {
		return m
	}
	var b strings.Builder
	for i := 0; i < 12; i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(m[i : i+2])
	}
	return b.String()
}

// putDiscovery is the node saying its BMC has the credentials: each MAC
// with an IPv4 address is placed now. Unless the caller is an admin,
// nothing is placed unless every MAC may be (mayPlace); with the discovery
// token, a MAC whose BMC is registered already at that address is a repeat
// of a done registration: 200 as a success, nothing placed (the discovery
// image calls again after reds registered the BMC it placed).
func (a *API) putDiscovery(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readAddresses(w, r)
	if !ok {
		return
	}
	var evs []lease.Event
	for _, ad := range body.Addresses {
		for _, ip := range ad.IPAddresses {
			if p := net.ParseIP(ip.Address); p != nil && p.To4() != nil {
				evs = append(evs, lease.Event{Kind: lease.Commit, MACAddress: lease.NormalizeMAC(macColons(ad.MACAddress)),
					IPAddress: p.String(), Time: a.svc.cfg.Now()})
				break
			}
		}
	}
	evs, err := a.toPlace(r, evs)
	if errors.Is(err, errTokenRefused) {
		problem.WriteStatus(w, r, http.StatusForbidden, err.Error())
		return
	} else if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	for _, ev := range evs {
		a.svc.claim(ev)
	}
	w.WriteHeader(http.StatusOK)
}
