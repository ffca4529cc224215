package fanout

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/sqldb"
)

// Params is the body of GET and PATCH /params, with HMS's field names.
// PATCH may change every field but Port and Scn_in_url, as in HMS; Debug,
// Scn_max_cache and Scn_backoff take effect at once, the others are only
// recorded and reported (they name HMS's etcd, HSM and Kafka settings, which
// this hmnfd takes from its flags). Changes are not persisted.
type Params struct { // fields in HMS's order
	Debug         int    `json:"Debug"`
	KVURL         string `json:"KV_url"`
	Nosm          int    `json:"Nosm"`
	Port          int    `json:"Port"`
	ScnInURL      string `json:"Scn_in_url"`
	ScnMaxCache   int    `json:"Scn_max_cache"`
	ScnCacheDelay int    `json:"Scn_cache_delay"`
	ScnRetries    int    `json:"Scn_retries"`
	ScnBackoff    int    `json:"Scn_backoff"`
	SMRetries     int    `json:"SM_retries"`
	SMTimeout     int    `json:"SM_timeout"`
	SMURL         string `json:"SM_url"`
	TelemetryHost string `json:"Telemetry_host"`
	UseTelemetry  int    `json:"Use_telemetry"`
}

func (a *API) getParams(w http.ResponseWriter, r *http.Request) {
	if !version(w, r) {
		return
	}
	a.pmu.Lock()
	p := a.params
	a.pmu.Unlock()
	httpserver.WriteJSON(w, http.StatusOK, p)
}

func (a *API) patchParams(w http.ResponseWriter, r *http.Request) {
	if !version(w, r) {
		return
	}
	var raw map[string]json.RawMessage
	if err := httpserver.ReadJSON(w, r, 64<<10, &raw); err != nil {
		a.fail(w, r, err)
		return
	}
	a.pmu.Lock()
	defer a.pmu.Unlock()
	p, err := applyParams(a.params, raw)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.params = p
	a.svc.batchMax.Store(int64(p.ScnMaxCache))
	a.svc.retryMin.Store(int64(time.Duration(p.ScnBackoff) * time.Second))
	if a.level != nil {
		a.level.Set(debugLevel(p.Debug))
	}
	a.log.Info("params_changed", "debug", p.Debug, "scn_max_cache", p.ScnMaxCache, "scn_backoff", p.ScnBackoff)
	httpserver.WriteJSON(w, http.StatusOK, p)
}

// applyParams checks a PATCH body and returns the new params. The details
// are HMS's: one "Invalid data type" sentence per field of the wrong JSON
// type, in HMS's order, and one sentence per read-only field sent.
func applyParams(p Params, raw map[string]json.RawMessage) (Params, error) {
	fields := []struct {
		name string
		dst  any
	}{
		{"Debug", &p.Debug}, {"Nosm", &p.Nosm}, {"Port", new(int)}, {"Scn_max_cache", &p.ScnMaxCache},
		{"Scn_cache_delay", &p.ScnCacheDelay}, {"Use_telemetry", &p.UseTelemetry}, {"KV_url", &p.KVURL},
		{"Scn_in_url", new(string)}, {"SM_url", &p.SMURL}, {"Telemetry_host", &p.TelemetryHost},
		{"Scn_retries", &p.ScnRetries}, {"Scn_backoff", &p.ScnBackoff}, {"SM_retries", &p.SMRetries},
		{"SM_timeout", &p.SMTimeout},
	}
	var detail strings.Builder
	known := map[string]bool{}
	for _, f := range fields {
		known[f.name] = true
		if v, ok := raw[f.name]; ok && json.Unmarshal(v, f.dst) != nil {
			fmt.Fprintf(&detail, "Invalid data type in %s field. ", f.name)
		}
	}
	for _, name := range []string{"Port", "Scn_in_url"} {
		if _, ok := raw[name]; ok {
			fmt.Fprintf(&detail, "Parameter '%s' can't be changed in PATCH operation; ", strings.ToLower(name))
		}
	}
	for name := range raw {
		if !known[name] {
			// HMS ignores unknown fields; a misspelt name is refused here.
			fmt.Fprintf(&detail, "Unknown parameter %s. ", name)
		}
	}
	for _, name := range []string{"Debug", "Scn_max_cache", "Scn_backoff"} {
		if _, ok := raw[name]; ok && detail.Len() == 0 {
			if err := checkRange(name, p); err != nil {
				return p, err
			}
		}
	}
	if detail.Len() > 0 {
		return p, problem.Invalidf("%s", detail.String())
	}
	return p, nil
}

// checkRange refuses values of the parameters that take effect which this
// hmnfd cannot run with.
func checkRange(name string, p Params) error {
	n := map[string]int{"Debug": p.Debug, "Scn_max_cache": p.ScnMaxCache, "Scn_backoff": p.ScnBackoff}[name]
	lo, hi := paramRange(name)
	if n < lo || n > hi {
		return problem.Invalidf("%s: %d out of range %d-%d", name, n, lo, hi)
	}
	return nil
}

func paramRange(name string) (int, int) {
	switch name {
	case "Scn_max_cache":
		return 1, 1000
	case "Scn_backoff":
		return 1, 3600
	default:
		return 0, 9
	}
}

// debugLevel maps the HMS Debug integer to a log level.
func debugLevel(d int) slog.Level {
	if d > 0 {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// health is the GET /health body.
type health struct {
	KvStore          string `json:"KvStore"`
	MsgBus           string `json:"MsgBus"`
	HsmSubscriptions string `json:"HsmSubscriptions"`
	PruneMap         string `json:"PruneMap"`
	WorkerPool       string `json:"WorkerPool"`
}

func (a *API) health(w http.ResponseWriter, r *http.Request) {
	if !version(w, r) {
		return
	}
	kind := a.svc.store.Kind()
	h := health{KvStore: kind + ": OK", MsgBus: a.params.TelemetryHost, HsmSubscriptions: a.svc.hsmStatus.Load().(string)}
	if err := a.svc.store.Ping(r.Context()); err != nil {
		h.KvStore = kind + ": " + err.Error()
	}
	if h.MsgBus == "" {
		h.MsgBus = "not configured"
	}
	senders, backlog := a.svc.stats()
	h.PruneMap = fmt.Sprintf("no pruning; subscribers expire after %s or %d undelivered SCNs",
		a.svc.cfg.RetentionAge, a.svc.cfg.RetentionCount)
	h.WorkerPool = fmt.Sprintf("Senders:%d, Backlog:%d, InFlight:%d", senders, backlog, a.svc.inFlight.Load())
	httpserver.WriteJSON(w, http.StatusOK, h)
}

// StartParams fills the static /params fields from the daemon's flags; an
// empty inURL becomes http://<hostname>:<port>/hmi/v1/scn. KV_url is
// sqlite:PATH, or the PostgreSQL URL without its password.
func StartParams(listen, dbPath, hsmURL, inURL string, brokers []string, topic string) Params {
	_, portStr, _ := net.SplitHostPort(listen)
	port, _ := strconv.Atoi(portStr)
	if inURL == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = "localhost"
		}
		inURL = "http://" + net.JoinHostPort(host, portStr) + "/hmi/v1/scn"
	}
	kv := "sqlite:" + dbPath
	if sqldb.IsPostgres(dbPath) {
		kv = sqldb.Display(dbPath) // without the password: readers may GET /params
	}
	p := Params{KVURL: kv, Port: port, ScnInURL: inURL}
	if hsmURL != "" {
		p.SMURL = hsmURL + "/hsm/v2"
	} else {
		p.Nosm = 1
	}
	if len(brokers) > 0 {
		p.TelemetryHost = strings.Join(brokers, ",") + ":" + topic
	}
	return p
}
