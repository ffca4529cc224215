package heartbeat

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/internal/daemontest"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// TestDaemonOnPostgres: hbtd runs on a PostgreSQL URL end to end (a
// heartbeat taken, /health naming the database), and its log does not
// show the URL's password.
func TestDaemonOnPostgres(t *testing.T) {
	dsn := pg.DatabaseWithPassword(t, "s3cret")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hsm/v2/service/values", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(hsm.Values{State: []string{"Off", "On", "Ready"}})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(w, r.Body) })
	fake := httptest.NewServer(mux)
	defer fake.Close()
	var logs bytes.Buffer
	d, err := StartDaemon(t.Context(), "127.0.0.1:0", Options{DBPath: dsn, HSMURL: fake.URL,
		Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	stop := daemontest.Run(t, d.Run)
	beat := `{"Component":"x0c0s0b0n0","Status":"OK","TimeStamp":"` + goodTS + `"}`
	for _, r := range []struct{ method, path, body, want string }{
		{method: "POST", path: "/heartbeat", body: beat},
		{method: "GET", path: "/hbstate/x0c0s0b0n0", want: `"Heartbeating":true`},
		{method: "GET", path: "/health", want: `"KvStore":"PostgreSQL OK"`},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), r.method, d.URL()+agent.BasePath+r.path, strings.NewReader(r.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), r.want) {
			t.Errorf("%s %s = %d %s, want 200 with %s", r.method, r.path, resp.StatusCode, body, r.want)
		}
	}
	stop()
	if strings.Contains(logs.String(), "s3cret") || !strings.Contains(logs.String(), "postgres:xxxxx@") {
		t.Errorf("log shows the password, or not the redacted URL:\n%s", logs.String())
	}
}
