package fanout

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
)

// Params is the body of GET and PATCH /params, with HMS's field names. Only
// Debug, Scn_max_cache and Scn_backoff can be changed at run time; the others
// report how hmnfd was started. Changes are not persisted.
type Params struct {
	Debug         int    `json:"Debug"`
	KVURL         string `json:"KV_url"`
	Nosm          int    `json:"Nosm"`
	Port          int    `json:"Port"`
	ScnInURL      string `json:"Scn_in_url"`
	ScnCacheDelay int    `json:"Scn_cache_delay"`
	ScnMaxCache   int    `json:"Scn_max_cache"`
	ScnBackoff    int    `json:"Scn_backoff"`
	ScnRetries    int    `json:"Scn_retries"`
	SMRetries     int    `json:"SM_retries"`
	SMTimeout     int    `json:"SM_timeout"`
	SMURL         string `json:"SM_url"`
	TelemetryHost string `json:"Telemetry_host"`
	UseTelemetry  int    `json:"Use_telemetry"`
}

// writableParams are the fields PATCH /params may change.
var writableParams = []string{"Debug", "Scn_max_cache", "Scn_backoff"}

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
	p, err := a.applyParams(a.params, raw)
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

// applyParams checks a PATCH body field by field and returns the new params.
func (a *API) applyParams(p Params, raw map[string]json.RawMessage) (Params, error) {
	for name, v := range raw {
		if !slices.Contains(writableParams, name) {
			if _, known := paramFields()[name]; known {
				return p, problem.Invalidf("%s: read-only here (writable: %s)", name, strings.Join(writableParams, ", "))
			}
			return p, problem.Invalidf("%s: unknown parameter", name)
		}
		var n int
		if err := json.Unmarshal(v, &n); err != nil {
			return p, problem.Invalidf("%s: want an integer", name)
		}
		lo, hi := paramRange(name)
		if n < lo || n > hi {
			return p, problem.Invalidf("%s: %d out of range %d-%d", name, n, lo, hi)
		}
		switch name {
		case "Debug":
			p.Debug = n
		case "Scn_max_cache":
			p.ScnMaxCache = n
		case "Scn_backoff":
			p.ScnBackoff = n
		}
	}
	return p, nil
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

func paramFields() map[string]bool {
	var raw map[string]any
	b, _ := json.Marshal(Params{})
	_ = json.Unmarshal(b, &raw)
	out := map[string]bool{}
	for k := range raw {
		out[k] = true
	}
	return out
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
	h := health{KvStore: "SQLite: OK", MsgBus: a.params.TelemetryHost, HsmSubscriptions: a.svc.hsmStatus.Load().(string)}
	if err := a.svc.store.Ping(r.Context()); err != nil {
		h.KvStore = "SQLite: " + err.Error()
	}
	if h.MsgBus == "" {
		h.MsgBus = "not configured"
	}
	senders, backlog := a.svc.stats()
	h.PruneMap = fmt.Sprintf("no pruning; subscribers expire after %s or %d undelivered SCNs",
		a.svc.cfg.RetentionAge, a.svc.cfg.RetentionCount)
	h.WorkerPool = fmt.Sprintf("Senders:%d, Backlog:%d, InFlight:%d", senders, backlog, len(a.svc.sem))
	httpserver.WriteJSON(w, http.StatusOK, h)
}

// StartParams fills the static /params fields from the daemon's flags; an
// empty inURL becomes http://<hostname>:<port>/hmi/v1/scn.
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
	p := Params{KVURL: "sqlite:" + dbPath, Port: port, ScnInURL: inURL}
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

// HSMSubscriber is the Subscriber name hmnfd gives HSM: hmnfd@<hostname>.
func HSMSubscriber() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return "hmnfd@" + host
}
