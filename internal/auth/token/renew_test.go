package token

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeJWT is an unsigned token with iat and exp: the client only reads them.
func fakeJWT(name string, iat, exp time.Time) string {
	b, _ := json.Marshal(map[string]any{"sub": name, "iat": iat.Unix(), "exp": exp.Unix()})
	return "e30." + base64.RawURLEncoding.EncodeToString(b) + ".sig"
}

// TestRenew: a token past half its life is exchanged at RenewURL (with the
// token) for a fresh one, sent from then on; a young token is not; a failed
// renewal keeps the old token and is not retried at once.
func TestRenew(t *testing.T) {
	now := time.Now()
	old := fakeJWT("old", now.Add(-2*time.Hour), now.Add(time.Hour))
	fresh := fakeJWT("fresh", now, now.Add(3*time.Hour))
	var renewals atomic.Int32
	var fail atomic.Bool
	var sent []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/renew" {
			renewals.Add(1)
			if fail.Load() || r.Header.Get("Authorization") != "Bearer "+old {
				w.WriteHeader(http.StatusForbidden)
				return
			}
			fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":10800}`, fresh)
			return
		}
		sent = append(sent, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	}))
	defer srv.Close()
	get := func(hc *http.Client) {
		t.Helper()
		resp, err := hc.Get(srv.URL + "/beat")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	fail.Store(true)
	hc := Config{Token: old, RenewURL: srv.URL + "/renew"}.Client(nil)
	get(hc)
	get(hc)
	fail.Store(false)
	if renewals.Load() != 1 || sent[0] != old || sent[1] != old {
		t.Fatalf("failing renewal: %d tries, sent %v; want one try and the old token", renewals.Load(), sent)
	}
	hc = Config{Token: old, RenewURL: srv.URL + "/renew"}.Client(nil)
	get(hc)
	get(hc)
	if renewals.Load() != 2 || sent[2] != fresh || sent[3] != fresh {
		t.Errorf("renewal: %d tries, sent %v; want the fresh token after one", renewals.Load(), sent[2:])
	}
	young := fakeJWT("young", now, now.Add(time.Hour))
	get(Config{Token: young, RenewURL: srv.URL + "/renew"}.Client(nil))
	if renewals.Load() != 2 || sent[4] != young {
		t.Errorf("a young token was renewed (%d) or not sent (%v)", renewals.Load(), sent[4:])
	}
}

func TestFromCmdline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cmdline")
	os.WriteFile(path, []byte("initrd=initrd console=ttyS0 xname=x1c0s0b0n0 hms_node_token=abc.def.ghi ds=nocloud-net;s=http://b/\n"), 0o444)
	if got := FromCmdline(path); got != "abc.def.ghi" {
		t.Errorf("FromCmdline = %q", got)
	}
	os.WriteFile(path, []byte("console=ttyS0 xhms_node_token=no\n"), 0o444)
	if got := FromCmdline(path); got != "" {
		t.Errorf("FromCmdline without the parameter = %q", got)
	}
	if got := FromCmdline(filepath.Join(t.TempDir(), "none")); got != "" {
		t.Errorf("FromCmdline of a missing file = %q", got)
	}
}
