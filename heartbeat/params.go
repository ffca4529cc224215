package heartbeat

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/redact"
)

// paramSet holds the live parameters and applies changes to the service.
// What PATCH changed is stored (as the shipped hbtd keeps its params blob in
// its KV store) and applied over the flags at the next start.
type paramSet struct {
	mu       sync.Mutex
	p        agent.Params
	svc      *Service
	logLevel *slog.LevelVar
	// patched are the values PATCH set, by parameter name.
	patched map[string]string
}

func newParamSet(o Options, svc *Service) *paramSet {
	telemetry := "0"
	if o.Publisher != nil {
		telemetry = "1"
	}
	return &paramSet{svc: svc, logLevel: o.LogLevel, p: agent.Params{
		Debug: "0", Errtime: secs(o.Errtime), Warntime: secs(o.Warntime), Interval: secs(o.Interval),
		Kv_url: "", Nosm: "0", Port: o.Port, Sm_retries: "3", Sm_timeout: secs(DefaultSmTimeout),
		Sm_url: svc.HSM.URL() + "/hsm/v2", Use_telemetry: telemetry, Telemetry_host: "",
	}}
}

func (ps *paramSet) get() agent.Params {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.p
}

// paramCheck validates one parameter value.
type paramCheck func(v string) string // returns a problem description or ""

func nonNegInt(v string) string {
	if n, err := strconv.Atoi(v); err != nil || n < 0 {
		return "want a whole number >= 0"
	}
	return ""
}

func anyString(string) string { return "" }

func httpURL(v string) string {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "want an http:// or https:// URL"
	}
	return ""
}

// checkFor returns the validation of the named parameter.
func checkFor(name string) paramCheck {
	switch name {
	case "Debug", "Nosm", "Sm_retries", "Use_telemetry":
		return nonNegInt
	case "Errtime", "Warntime", "Interval", "Sm_timeout":
		return timerCheck
	case "Sm_url":
		return httpURL
	default:
		return anyString
	}
}

// patch validates body (a JSON object of string values, keys matched without
// regard to case), stores what it sets and applies it, all or not at all.
func (ps *paramSet) patch(ctx context.Context, raw map[string]json.RawMessage) (agent.Params, error) {
	vals := make(map[string]string, len(raw))
	for key, val := range raw {
		name := canonicalParam(key)
		if name == "" {
			return agent.Params{}, problem.Invalidf("field %s: unknown parameter", key)
		}
		var s string
		if err := json.Unmarshal(val, &s); err != nil {
			return agent.Params{}, problem.Invalidf("field %s: expected a JSON string, got %s", name, val)
		}
		vals[name] = strings.TrimSpace(s)
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	next, t, err := ps.with(vals)
	if err != nil {
		return agent.Params{}, err
	}
	patched := maps.Clone(ps.patched)
	if patched == nil {
		patched = map[string]string{}
	}
	for name, v := range vals {
		if name != "Port" {
			patched[name] = v
		}
	}
	if err := ps.svc.Store.SaveParams(ctx, patched); err != nil {
		return agent.Params{}, err
	}
	ps.p, ps.patched = next, patched
	ps.apply(next, t)
	return next, nil
}

// with returns the live parameters changed by vals (canonical names), checked
// one by one and together; ps.mu is held.
func (ps *paramSet) with(vals map[string]string) (agent.Params, Timers, error) {
	next := ps.p
	rv := reflect.ValueOf(&next).Elem()
	for _, name := range slices.Sorted(maps.Keys(vals)) { // the same error for the same body
		s := vals[name]
		if msg := checkFor(name)(s); msg != "" {
			return agent.Params{}, Timers{}, problem.Invalidf("field %s: %q: %s", name, s, msg)
		}
		if name == "Port" && s != ps.p.Port {
			return agent.Params{}, Timers{}, problem.Invalidf("field Port: read-only")
		}
		rv.FieldByName(name).SetString(s)
	}
	t, err := paramTimers(next)
	if err == nil {
		err = CheckTimers(t)
	}
	if err != nil {
		return agent.Params{}, Timers{}, problem.Invalidf("field %v", err)
	}
	return next, t, nil
}

// restore applies the values an earlier PATCH stored over the flags. A
// stored set that no longer fits (e.g. Warntime not below a new -errtime) is
// not applied, and said so.
func (ps *paramSet) restore(patched map[string]string, log *slog.Logger) {
	if len(patched) == 0 {
		return
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	next, t, err := ps.with(patched)
	if err != nil {
		log.Warn("params_not_restored", "patched", redactParams(patched), "err", err)
		return
	}
	ps.p, ps.patched = next, patched
	ps.apply(next, t)
	log.Info("params_restored", "patched", redactParams(patched))
}

func (ps *paramSet) apply(p agent.Params, t Timers) {
	svc := ps.svc
	svc.Tracker.SetThresholds(t.Warntime, t.Errtime)
	svc.HSM.SetURL(p.Sm_url)
	svc.HSM.SetTimeout(t.SmTimeout)
	svc.HSM.SetDisabled(isOn(p.Nosm))
	if svc.Bus != nil {
		svc.Bus.SetDisabled(!isOn(p.Use_telemetry))
	}
	if ps.logLevel != nil {
		level := slog.LevelInfo
		if isOn(p.Debug) {
			level = slog.LevelDebug
		}
		ps.logLevel.Set(level)
	}
}

// canonicalParam returns the Params field named key without regard to case.
func canonicalParam(key string) string {
	t := reflect.TypeFor[agent.Params]()
	for i := range t.NumField() {
		if name := t.Field(i).Name; strings.EqualFold(name, key) {
			return name
		}
	}
	return ""
}

func isOn(v string) bool {
	n, _ := strconv.Atoi(v)
	return n != 0
}

// redactParams is patched with the password of Sm_url masked, for logs.
func redactParams(patched map[string]string) map[string]string {
	u, ok := patched["Sm_url"]
	if !ok {
		return patched
	}
	out := maps.Clone(patched)
	out["Sm_url"] = redact.URL(u)
	return out
}
