package statemgr_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/authtest"
	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/statemgr"
)

// TestSCNCallbacksCarrySCNToken: with -scn-token hsm's SCN callbacks carry
// that token (to loopback and -scn-token-hosts subscribers); without it, hsm's own token, to
// subscribers on this host only.
func TestSCNCallbacksCarrySCNToken(t *testing.T) {
	is := authtest.New(t)
	admin, scn := is.Token("hsm", auth.Admin), is.Token("hms-scn", auth.SCN)
	for _, tt := range []struct {
		name string
		scn  token.Config
		want string
	}{
		{name: "scn token", scn: token.Config{Token: scn}, want: "Bearer " + scn},
		{name: "own token to loopback", want: "Bearer " + admin},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := make(chan string, 16)
			sub := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				select {
				case got <- r.Header.Get("Authorization"):
				default:
				}
			}))
			t.Cleanup(sub.Close)
			cfg := is.Config()
			cfg.Token = token.Config{Token: admin}
			d, err := statemgr.StartDaemon(t.Context(), statemgr.DaemonConfig{Listen: "127.0.0.1:0",
				DB: filepath.Join(t.TempDir(), "hsm.db"), CredKeyFile: filepath.Join(t.TempDir(), "cred.key"),
				Retention: time.Hour, Reap: time.Minute, Auth: cfg, SCNToken: tt.scn})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- d.Run(ctx) }()
			t.Cleanup(func() { cancel(); <-done })
			post := func(method, path, body string) {
				t.Helper()
				req, _ := http.NewRequestWithContext(t.Context(), method, d.URL()+path, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+admin)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode >= 300 {
					t.Fatalf("POST %s: %d", path, resp.StatusCode)
				}
			}
			post("POST", "/hsm/v2/State/Components", `{"Components":[{"ID":"x3000c0s1b0n0","State":"On"}]}`)
			post("POST", "/hsm/v2/Subscriptions/SCN", `{"Subscriber":"test@x0","States":["Off"],"Url":"`+sub.URL+`/scn"}`)
			post("PATCH", "/hsm/v2/State/Components/x3000c0s1b0n0/StateData", `{"State":"Off"}`)
			guard := time.NewTimer(time.Minute) // against a hang, not a timing assertion
			defer guard.Stop()
			select {
			case a := <-got:
				if a != tt.want {
					t.Errorf("callback Authorization %q, want %q", a, tt.want)
				}
			case <-guard.C:
				t.Fatal("no callback")
			}
		})
	}
}
