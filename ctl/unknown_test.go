package ctl_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hmsuite/hms/ctl"
	redswire "github.com/hmsuite/hms/discovery/wire"
)

// fakeREDS serves GET /v1/unknown as reds does: the deferred MAC only with
// ?deferred=true.
func fakeREDS(t *testing.T) string {
	t.Helper()
	at := time.Date(2026, 11, 24, 21, 0, 0, 0, time.UTC)
	listed := []redswire.Unknown{
		{MACAddress: "b4:2e:99:00:00:01", IPAddress: "10.254.1.7", Reason: redswire.ReasonNoConnector,
			Detail: "x3000c0w14 port 7 has no connector in SLS", Switch: "x3000c0w14", Port: "7",
			Attempts: 3, LastAttempt: at, NextAttempt: at.Add(4 * time.Minute)},
		{MACAddress: "b4:2e:99:00:00:02", IPAddress: "10.254.1.8", Reason: redswire.ReasonBMCRefused,
			Detail: "401 Unauthorized", Xname: "x3000c0s9b0", Attempts: 1, LastAttempt: at, NextAttempt: at.Add(time.Minute)},
	}
	deferred := redswire.Unknown{MACAddress: "b4:2e:99:00:00:03", IPAddress: "10.254.1.9",
		Reason: redswire.ReasonNotOnAnySwitch, Attempts: 1, LastAttempt: at, Deferred: true}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/readiness" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.Method != http.MethodGet || r.URL.Path != "/v1/unknown" {
			http.NotFound(w, r)
			return
		}
		body := redswire.UnknownList{Unknown: listed}
		if r.URL.Query().Get("deferred") == "true" {
			body.Unknown = append(append([]redswire.Unknown{}, listed...), deferred)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestGetUnknownFromREDS(t *testing.T) {
	urls := startSuite(t)
	seedHSM(t, urls["hsm"])
	urls["reds"] = fakeREDS(t)
	e := suiteEnv(t, urls)

	r := hms(t, e, "get", "unknown")
	if r.err != nil || r.stderr != "" {
		t.Fatalf("get unknown: %v (stderr %q)", r.err, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 {
		t.Fatalf("get unknown printed %d lines, want a header and 2 MACs:\n%s", len(lines), r.stdout)
	}
	for _, want := range [][]string{
		{"MAC", "REASON", "SWITCH", "PORT", "ATTEMPTS", "LAST SEEN"},
		{"b4:2e:99:00:00:01", "10.254.1.7", "no_connector", "x3000c0w14", "7", "3", "2026-11-24"},
		{"b4:2e:99:00:00:02", "bmc_refused", "1"},
	} {
		if !containsAll(r.stdout, want) {
			t.Errorf("get unknown lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "a4:bf:01:00:00:99") || strings.Contains(r.stdout, "401 Unauthorized") {
		t.Errorf("get unknown shows HSM's MAC or the wide detail:\n%s", r.stdout)
	}
	if w := hms(t, e, "get", "unknown", "-o", "wide"); !containsAll(w.stdout, []string{"DETAIL", "401 Unauthorized", "x3000c0s9b0"}) {
		t.Errorf("get unknown -o wide:\n%s", w.stdout)
	}

	checkUnknownShape(t, hms(t, e, "get", "unknown", "-o", "json").stdout)
	var got []redswire.Unknown
	hmsJSON(t, e, &got, "get", "unknown", "--deferred")
	if len(got) != 3 || !got[2].Deferred || got[2].Reason != redswire.ReasonNotOnAnySwitch {
		t.Errorf("get unknown --deferred = %+v, want the deferred MAC too", got)
	}
	var st ctl.Status
	hmsJSON(t, e, &st, "status")
	if st.UnknownMACs == nil || *st.UnknownMACs != 2 {
		t.Errorf("status UnknownMACs = %v, want reds' 2", st.UnknownMACs)
	}
}

// TestGetUnknownFallback: with reds down, get unknown lists HSM's view and
// says so on stderr; status counts the same.
func TestGetUnknownFallback(t *testing.T) {
	urls := startSuite(t)
	seedHSM(t, urls["hsm"])
	down := httptest.NewServer(http.NotFoundHandler())
	urls["reds"] = down.URL
	down.Close() // nothing listens there now
	e := suiteEnv(t, urls)

	r := hms(t, e, "get", "unknown", "-o", "json")
	if r.err != nil {
		t.Fatalf("get unknown: %v (stderr %q)", r.err, r.stderr)
	}
	got := checkUnknownShape(t, r.stdout)
	if len(got) != 1 || got[0].MACAddress != "a4:bf:01:00:00:99" || got[0].Reason != redswire.ReasonInHSMOnly {
		t.Errorf("unknown MACs = %+v, want only HSM's a4:bf:01:00:00:99, reason %s", got, redswire.ReasonInHSMOnly)
	}
	if n := strings.Count(r.stderr, "\n"); n != 1 || !strings.Contains(r.stderr, "cannot reach reds") || !strings.Contains(r.stderr, "HSM") {
		t.Errorf("stderr %q, want one note naming reds and HSM", r.stderr)
	}
	// status fails (reds is not ready) but still reports the count.
	var st ctl.Status
	r = hms(t, e, "status", "-o", "json")
	mustOK(t, jsonUnmarshal(r.stdout, &st))
	if st.UnknownMACs == nil || *st.UnknownMACs != 1 {
		t.Errorf("status UnknownMACs = %v, want HSM's 1", st.UnknownMACs)
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// checkUnknownShape decodes the JSON of `hms get unknown` as reds' wire
// type, refusing any other field, whether it came from reds or from HSM.
func checkUnknownShape(t *testing.T, out string) []redswire.Unknown {
	t.Helper()
	var got []redswire.Unknown
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("get unknown -o json is not a list of reds' Unknown: %v\n%s", err, out)
	}
	var raw []map[string]any
	mustOK(t, jsonUnmarshal(out, &raw))
	for _, u := range raw {
		for _, k := range []string{"MACAddress", "IPAddress", "Reason", "Detail", "Attempts", "LastAttempt", "NextAttempt"} {
			if _, ok := u[k]; !ok {
				t.Errorf("get unknown -o json: %s missing in %v", k, u)
			}
		}
	}
	return got
}
