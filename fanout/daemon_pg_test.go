package fanout

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/daemontest"
)

// TestDaemonOnPostgres: hmnfd runs on a PostgreSQL URL end to end (a
// subscription stored, an SCN queued and delivered, /health naming the
// database), and neither its log nor /params shows the URL's password.
func TestDaemonOnPostgres(t *testing.T) {
	dsn := pg.DatabaseWithPassword(t, "s3cret")
	got := make(chan delivery, 1)
	sub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var d delivery
		if json.NewDecoder(r.Body).Decode(&d) == nil {
			select {
			case got <- d:
			default:
			}
		}
	}))
	defer sub.Close()
	var logs bytes.Buffer
	d, err := StartDaemon(t.Context(), DaemonConfig{Listen: "127.0.0.1:0", DB: dsn, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	stop := daemontest.Run(t, d.Run)
	daemontest.Check(t, d.URL(), []daemontest.Call{
		{Method: "POST", Path: "/hmi/v2/subscriptions/x1c0s0b0n0/agents/handler",
			Body: `{"Components":["x1c0s0b0n1"],"States":["Off"],"Url":"` + sub.URL + `/scn"}`},
		{Method: "GET", Path: "/hmi/v2/subscriptions", Want: `"SubscriberAgent":"handler"`},
		{Method: "POST", Path: "/hmi/v1/scn", Body: `{"Components":["x1c0s0b0n1"],"State":"Off"}`},
		{Method: "GET", Path: "/hmi/v2/health", Want: `"KvStore":"PostgreSQL: OK"`},
		{Method: "GET", Path: "/hmi/v2/params", Want: `"KV_url":"postgres://postgres:xxxxx@`},
	}, "s3cret")
	select {
	case dl := <-got:
		if dl.State != "Off" || len(dl.Components) != 1 || dl.Components[0] != "x1c0s0b0n1" {
			t.Errorf("delivered %+v, want x1c0s0b0n1 Off", dl)
		}
	case <-time.After(time.Minute): // a safety net: delivery is immediate
		t.Fatal("no SCN delivered")
	}
	stop()
	if strings.Contains(logs.String(), "s3cret") || !strings.Contains(logs.String(), "postgres:xxxxx@") {
		t.Errorf("log shows the password, or not the redacted URL:\n%s", logs.String())
	}
}
