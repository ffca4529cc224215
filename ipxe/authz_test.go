package ipxe

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/authtest"
	"github.com/hmsuite/hms/internal/httpserver"
)

// TestAuthTable: the table names every route bss serves, and nothing else.
func TestAuthTable(t *testing.T) {
	h := newHarness(t)
	authtest.CheckTable(t, AuthTable(), NewAPI(h.svc, nil, nil, Version).Handler().(*httpserver.Mux).Patterns())
}

// fromAddr is a client whose connections come from the loopback address ip.
func fromAddr(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

// getAs sends GET path from hc with token ("" none) and returns the status
// and body.
func getAs(t *testing.T, hc *http.Client, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var cmdlineToken = regexp.MustCompile(CmdlineParam + `=(\S+)`)

// TestNodeTokens: in enforce mode a node fetches its boot script and
// cloud-init without a token; asking from its own address it gets a node
// token for its xname on the kernel command line and in its meta-data,
// which the suite's daemons verify with the key bss serves, and which
// renews itself only; nobody else gets it.
func TestNodeTokens(t *testing.T) {
	is := authtest.New(t)
	keyFile := filepath.Join(t.TempDir(), "node.key")
	if err := auth.WriteKeyFile(keyFile); err != nil {
		t.Fatal(err)
	}
	signer, err := auth.LoadSigner(keyFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(c *Config) { c.NodeTokens = &NodeTokens{Signer: signer, TTL: time.Hour} })
	h.nodes(node("x3000c0s1b0n0", "Compute", "", 1, []string{"a4:bf:01:00:00:01"}, "127.0.0.1"),
		node("x3000c0s2b0n0", "Compute", "", 2, []string{"a4:bf:01:00:00:02"}, "127.0.0.2"))
	if st, _, b := h.do(t, "PUT", "/boot/v1/bootparameters", `{"hosts":["Compute"],"kernel":"http://k","params":"console=ttyS0"}`); st != 200 {
		t.Fatalf("put: %d %s", st, b)
	}
	guarded, err := is.Config().Wrap(NewAPI(h.svc, nil, nil, Version).Handler(), AuthTable(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(guarded)
	t.Cleanup(srv.Close)
	a, b := fromAddr("127.0.0.1"), fromAddr("127.0.0.2")

	st, script := getAs(t, a, srv.URL+"/boot/v1/bootscript?mac=a4:bf:01:00:00:01", "")
	m := cmdlineToken.FindStringSubmatch(script)
	if st != 200 || m == nil {
		t.Fatalf("node A's own script: %d, no %s in\n%s", st, CmdlineParam, script)
	}
	tokA := m[1]
	jwks := filepath.Join(t.TempDir(), "node.jwks")
	if st, body := getAs(t, a, srv.URL+"/boot/v1/node-jwks", ""); st != 200 || os.WriteFile(jwks, []byte(body), 0o600) != nil {
		t.Fatalf("node-jwks: %d %s", st, body)
	}
	v, err := auth.NewVerifier(auth.Config{NodeKeys: jwks}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := v.Verify(t.Context(), tokA); err != nil || p.Subject != "x3000c0s1b0n0" || !p.Has(auth.Node) || len(p.Roles) != 1 {
		t.Fatalf("node A's token: %+v, %v", p, err)
	}
	// Another node's script asked from A's address, or A's from B's: no token.
	for _, c := range []struct {
		hc  *http.Client
		url string
	}{{a, "/boot/v1/bootscript?mac=a4:bf:01:00:00:02"}, {b, "/boot/v1/bootscript?name=x3000c0s1b0n0"}, {a, "/boot/v1/bootscript?nid=2"}} {
		if st, script := getAs(t, c.hc, srv.URL+c.url, ""); st != 200 || strings.Contains(script, CmdlineParam) {
			t.Errorf("%s: %d, want a script without a token:\n%s", c.url, st, script)
		}
	}
	var md map[string]any
	st, body := getAs(t, b, srv.URL+"/meta-data", "")
	if err := json.Unmarshal([]byte(body), &md); st != 200 || err != nil {
		t.Fatalf("meta-data: %d %s", st, body)
	}
	if p, err := v.Verify(t.Context(), fmt.Sprint(md[MetaDataKey])); err != nil || p.Subject != "x3000c0s2b0n0" {
		t.Errorf("node B's meta-data token: %+v, %v", p, err)
	}
	if st, _ := getAs(t, b, srv.URL+"/user-data", ""); st != 200 {
		t.Errorf("user-data without a token: %d", st)
	}

	is2 := is.Config()
	is2.NodeKeys = jwks
	guarded, err = is2.Wrap(NewAPI(h.svc, nil, nil, Version).Handler(), AuthTable(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(guarded)
	t.Cleanup(srv2.Close)
	for _, c := range []struct {
		path, token string
		from        *http.Client // nil: node B's address
		want        int
	}{
		{path: "/boot/v1/node-token?name=x3000c0s1b0n0", want: 401},
		{path: "/boot/v1/node-token?name=x3000c0s2b0n0", token: tokA, want: 403},
		{path: "/boot/v1/node-token?name=x3000c0s1b0n0", token: tokA, from: a, want: 200},
		// A's token used from another address (leaked) is not renewed.
		{path: "/boot/v1/node-token?name=x3000c0s1b0n0", token: tokA, want: 403},
		{path: "/boot/v1/node-token?name=x3000c0s2b0n0", token: is.Token("ada", auth.Admin), want: 200},
		{path: "/boot/v1/node-token?name=x3000c0s2b0n0", token: is.Token("olaf", auth.Operator), want: 403},
		{path: "/boot/v1/bootparameters", token: tokA, want: 403},
		{path: "/boot/v1/nosuchroute", token: tokA, want: 403},
		{path: "/boot/v1/dumpstate", token: is.Token("vera", auth.Viewer), want: 403},
		{path: "/boot/v1/service/status", want: 200},
	} {
		from := b
		if c.from != nil {
			from = c.from
		}
		st, body := getAs(t, from, srv2.URL+c.path, c.token)
		if st != c.want {
			t.Errorf("GET %s: %d, want %d: %s", c.path, st, c.want, body)
			continue
		}
		var tr TokenResponse
		if st == 200 && strings.Contains(c.path, "node-token") {
			if err := json.Unmarshal([]byte(body), &tr); err != nil || tr.TokenType != "Bearer" || tr.ExpiresIn != 3600 {
				t.Errorf("%s: %s", c.path, body)
			}
			if p, err := v.Verify(t.Context(), tr.AccessToken); err != nil || p.Subject != c.path[len(c.path)-13:] {
				t.Errorf("%s: renewed token %+v, %v", c.path, p, err)
			}
		}
	}
}

// TestNoNodeTokens: without -node-token-key no script carries a token and
// the token routes are 404.
func TestNoNodeTokens(t *testing.T) {
	h := newHarness(t)
	h.nodes(node("x3000c0s1b0n0", "Compute", "", 1, []string{"a4:bf:01:00:00:01"}, "127.0.0.1"))
	h.do(t, "PUT", "/boot/v1/bootparameters", `{"hosts":["Compute"],"kernel":"http://k"}`)
	if st, _, script := h.do(t, "GET", "/boot/v1/bootscript?mac=a4:bf:01:00:00:01", ""); st != 200 || strings.Contains(script, CmdlineParam) {
		t.Errorf("script: %d\n%s", st, script)
	}
	for _, p := range []string{"/boot/v1/node-jwks", "/boot/v1/node-token?name=x3000c0s1b0n0"} {
		if st, _, _ := h.do(t, "GET", p, ""); st != 404 {
			t.Errorf("%s: %d, want 404", p, st)
		}
	}
}
