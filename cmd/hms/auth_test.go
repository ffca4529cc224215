package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/authtest"
	"github.com/hmsuite/hms/internal/auth/token"
)

// callAs is call with a Bearer token ("" sends none).
func callAs(t *testing.T, token, method, url, body string, want int) []byte {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, url, resp.StatusCode, want, b)
	}
	return b
}

// TestUpEnforcesAuth: hms up with a key file and a service token in
// enforce mode: the daemons still reach each other (hmnfd and bss
// subscribe to hsm, hsm reads SLS, hbtd reports to hsm), while callers
// without a token or the role are refused and change nothing.
func TestUpEnforcesAuth(t *testing.T) {
	is := authtest.New(t)
	u := suiteUpWith(t, t.TempDir(), func(string) string { return "" },
		"-jwt-key-file", is.KeyFile(), "-jwt-issuer", authtest.IssuerName, "-jwt-audience", authtest.Audience,
		"-token-file", is.TokenFile("hms-up", auth.Admin))
	const n0 = "x3000c0s1b0n0"
	operator, viewer := is.Token("olaf", auth.Operator), is.Token("vera", auth.Viewer)
	subURL, scns := scnSink(t)
	node, other := is.Token(n0, auth.Node), is.Token("x3000c0s2b0n0", auth.Node)

	callAs(t, "", "POST", u["sls"]+"/v1/hardware", `{"Xname":"`+n0+`","Class":"River","ExtraProperties":{"NID":17,"Role":"Compute"}}`, http.StatusUnauthorized)
	callAs(t, viewer, "POST", u["sls"]+"/v1/hardware", `{"Xname":"`+n0+`","Class":"River","ExtraProperties":{"NID":17,"Role":"Compute"}}`, http.StatusForbidden)
	callAs(t, operator, "POST", u["sls"]+"/v1/hardware", `{"Xname":"`+n0+`","Class":"River","ExtraProperties":{"NID":17,"Role":"Compute"}}`, http.StatusCreated)
	callAs(t, "", "POST", u["hsm"]+"/hsm/v2/State/Components", `{"Components":[{"ID":"`+n0+`","State":"On"}]}`, http.StatusUnauthorized)
	callAs(t, operator, "POST", u["hsm"]+"/hsm/v2/State/Components", `{"Components":[{"ID":"`+n0+`","State":"On"}]}`, http.StatusNoContent)
	callAs(t, operator, "POST", u["hmnfd"]+"/hmi/v1/subscribe", `{"Subscriber":"x3000c0s2b0n0","Components":["`+n0+`"],"States":["Ready"],"Url":"`+subURL+`"}`, http.StatusOK)
	beat := `{"Component":"` + n0 + `","Hostname":"nid17","NID":"17","Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"}`
	callAs(t, other, "POST", u["hbtd"]+"/hmi/v1/heartbeat", beat, http.StatusForbidden)
	callAs(t, node, "POST", u["hbtd"]+"/hmi/v1/heartbeat", beat, http.StatusOK)
	callAs(t, "", "GET", u["hsm"]+"/hsm/v2/service/ready", "", http.StatusOK)
	callAs(t, "", "GET", u["hbtd"]+"/metrics", "", http.StatusOK) // open without -metrics-auth

	// hbtd tells hsm (with the suite's token) in the background; hsm's
	// SCN of the node going Ready, through hmnfd, says it has.
	waitSCN(t, scns, n0, "Ready")
	var c struct {
		State, Role string
		NID         int
	}
	json.Unmarshal(callAs(t, viewer, "GET", u["hsm"]+"/hsm/v2/State/Components/"+n0, "", http.StatusOK), &c)
	if c.State != "Ready" || c.NID != 17 || c.Role != "Compute" {
		t.Errorf("hsm has %+v, want Ready, NID 17 and Role Compute read from SLS with the suite's token", c)
	}
	callAs(t, node, "GET", u["hsm"]+"/hsm/v2/State/Components/"+n0, "", http.StatusOK)
	callAs(t, node, "GET", u["hsm"]+"/hsm/v2/State/Components/x3000c0s2b0n0", "", http.StatusForbidden)
	callAs(t, operator, "PATCH", u["hbtd"]+"/hmi/v1/params", `{"Nosm":"1"}`, http.StatusForbidden)
}

// TestUpNodeTokens: in enforce mode, a node fetches its boot script without
// a token and finds its node token on the kernel command line; hbtd takes
// its heartbeats with that token (hbagent's -token-cmdline), but not a
// heartbeat for another node, and the token is worth nothing elsewhere.
func TestUpNodeTokens(t *testing.T) {
	is := authtest.New(t)
	key := filepath.Join(t.TempDir(), "node.key")
	if err := auth.WriteKeyFile(key); err != nil {
		t.Fatal(err)
	}
	signer, err := auth.LoadSigner(key, nil)
	if err != nil {
		t.Fatal(err)
	}
	jwks := filepath.Join(t.TempDir(), "node.jwks")
	if err := os.WriteFile(jwks, signer.JWKS(), 0o644); err != nil {
		t.Fatal(err)
	}
	admin := is.Token("ada", auth.Admin)
	u := suiteUpWith(t, t.TempDir(), func(string) string { return "" },
		"-jwt-key-file", is.KeyFile(), "-jwt-issuer", authtest.IssuerName, "-jwt-audience", authtest.Audience,
		"-token-file", is.TokenFile("hms-up", auth.Admin), "-bss-node-token-key", key, "-node-jwt-keys", jwks, "-metrics-auth")
	const a, b = "x3000c0s1b0n0", "x3000c0s2b0n0"
	callAs(t, admin, "POST", u["hsm"]+"/hsm/v2/State/Components",
		`{"Components":[{"ID":"`+a+`","State":"On","Role":"Compute","NID":1,"Enabled":true},{"ID":"`+b+`","State":"On","Role":"Compute","NID":2,"Enabled":true}]}`, http.StatusNoContent)
	callAs(t, admin, "POST", u["hsm"]+"/hsm/v2/Inventory/EthernetInterfaces",
		`{"MACAddress":"a4:bf:01:00:00:01","ComponentID":"`+a+`","IPAddresses":[{"IPAddress":"127.0.0.1"}]}`, http.StatusCreated)
	callAs(t, admin, "PUT", u["bss"]+"/boot/v1/bootparameters", `{"hosts":["Compute"],"kernel":"http://k/vmlinuz"}`, http.StatusOK)
	// POST /hosts answers once bss has re-read HSM.
	callAs(t, admin, "POST", u["bss"]+"/boot/v1/hosts", "", http.StatusNoContent)
	script := string(callAs(t, "", "GET", u["bss"]+"/boot/v1/bootscript?mac=a4:bf:01:00:00:01", "", http.StatusOK))
	if !strings.Contains(script, "xname="+a) {
		t.Fatalf("bss does not boot %s:\n%s", a, script)
	}
	cmdline := filepath.Join(t.TempDir(), "cmdline")
	kernelLine := strings.SplitN(script, "\n", 3)[1] // kernel --name kernel URL <command line> || goto boot_retry
	if err := os.WriteFile(cmdline, []byte(kernelLine), 0o444); err != nil {
		t.Fatal(err)
	}
	tok := token.FromCmdline(cmdline)
	if tok == "" {
		t.Fatalf("no node token in the script:\n%s", script)
	}
	beat := func(x string) string {
		return `{"Component":"` + x + `","Hostname":"nid1","NID":"1","Status":"OK","TimeStamp":"2026-11-24T12:00:00Z"}`
	}
	callAs(t, tok, "POST", u["hbtd"]+"/hmi/v1/heartbeat", beat(a), http.StatusOK)
	callAs(t, tok, "POST", u["hbtd"]+"/hmi/v1/heartbeat", beat(b), http.StatusForbidden)
	callAs(t, tok, "POST", u["hbtd"]+"/hmi/v1/heartbeat/"+b, `{"Status":"OK"}`, http.StatusForbidden)
	callAs(t, "", "POST", u["hbtd"]+"/hmi/v1/heartbeat", beat(a), http.StatusUnauthorized)
	callAs(t, tok, "GET", u["sls"]+"/v1/hardware", "", http.StatusForbidden)
	callAs(t, tok, "GET", u["hsm"]+"/hsm/v2/State/Components/"+a, "", http.StatusOK)
	callAs(t, tok, "GET", u["hsm"]+"/hsm/v2/State/Components/"+b, "", http.StatusForbidden)
	for _, d := range []string{"sls", "hsm", "hbtd", "hmnfd", "bss", "pcs", "bos", "reds"} {
		callAs(t, "", "GET", u[d]+"/metrics", "", http.StatusUnauthorized)
		callAs(t, tok, "GET", u[d]+"/metrics", "", http.StatusForbidden)
		callAs(t, is.Token("vera", auth.Viewer), "GET", u[d]+"/metrics", "", http.StatusOK)
	}
	// From another address the same script carries no token.
	hc := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}}
	resp, err := hc.Get(u["bss"] + "/boot/v1/bootscript?mac=a4:bf:01:00:00:01")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(other), "xname="+a) || strings.Contains(string(other), token.CmdlineParam) {
		t.Errorf("script asked from another address:\n%s", other)
	}
}

// TestUpAuthLocal: hms up -auth-local makes its own keys and admin token
// under the data directory and enforces tokens with them: the CLI given the
// token in its config file works, a caller without one is refused, and bss
// gives a node a node token that hbtd takes.
func TestUpAuthLocal(t *testing.T) {
	dir := t.TempDir()
	u := suiteUpWith(t, dir, func(string) string { return "" }, "-auth-local")
	adminFile := filepath.Join(dir, "auth", "admin.token")
	if u["admin-token"] != adminFile {
		t.Fatalf("hms up printed admin-token %q, want %s", u["admin-token"], adminFile)
	}
	for _, f := range []string{adminFile, filepath.Join(dir, "auth", "signing.key"), filepath.Join(dir, "auth", "node-token.key"), filepath.Join(dir, "auth", "scn.token")} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want mode 0600", f, fi, err)
		}
	}
	b, err := os.ReadFile(adminFile)
	if err != nil {
		t.Fatal(err)
	}
	admin := strings.TrimSpace(string(b))
	const n0 = "x3000c0s1b0n0"
	callAs(t, "", "GET", u["hsm"]+"/hsm/v2/State/Components", "", http.StatusUnauthorized)
	callAs(t, admin, "POST", u["hsm"]+"/hsm/v2/State/Components",
		`{"Components":[{"ID":"`+n0+`","State":"On","Role":"Compute","NID":1,"Enabled":true}]}`, http.StatusNoContent)

	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".config", "hms"), 0o700)
	os.WriteFile(filepath.Join(home, ".config", "hms", "config.yaml"), []byte("token-file: "+adminFile+"\nhsm-url: "+u["hsm"]+"\n"), 0o600)
	var out strings.Builder
	env := func(k string) string { return map[string]string{"HOME": home}[k] }
	if err := run(t.Context(), []string{"get", "nodes", "-o", "json"}, env, &out); err != nil || !strings.Contains(out.String(), n0) {
		t.Errorf("hms get nodes with the config's token: %v\n%s", err, out.String())
	}

	callAs(t, admin, "POST", u["hsm"]+"/hsm/v2/Inventory/EthernetInterfaces",
		`{"MACAddress":"a4:bf:01:00:00:01","ComponentID":"`+n0+`","IPAddresses":[{"IPAddress":"127.0.0.1"}]}`, http.StatusCreated)
	callAs(t, admin, "PUT", u["bss"]+"/boot/v1/bootparameters", `{"hosts":["Compute"],"kernel":"http://k/vmlinuz"}`, http.StatusOK)
	callAs(t, admin, "POST", u["bss"]+"/boot/v1/hosts", "", http.StatusNoContent) // answered once bss has re-read HSM
	var md map[string]any
	json.Unmarshal(callAs(t, "", "GET", u["bss"]+"/meta-data", "", http.StatusOK), &md)
	if md["hms-node-token"] == nil {
		t.Fatalf("bss did not give %s its token: %v", n0, md)
	}
	beat := `{"Component":"` + n0 + `","Hostname":"nid1","NID":"1","Status":"OK","TimeStamp":"2026-11-24T12:00:00Z"}`
	callAs(t, md["hms-node-token"].(string), "POST", u["hbtd"]+"/hmi/v1/heartbeat", beat, http.StatusOK)
}

// TestUpAuthLocalShadow: hms up -auth-local -auth-shadow -metrics-auth
// checks tokens with its own keys but refuses nothing: a caller without a
// token is served, and counted (on /metrics too, by the same guard) as
// what enforce mode would refuse.
func TestUpAuthLocalShadow(t *testing.T) {
	u := suiteUpWith(t, t.TempDir(), func(string) string { return "" }, "-auth-local", "-auth-shadow", "-metrics-auth")
	callAs(t, "", "GET", u["hsm"]+"/hsm/v2/State/Components", "", http.StatusOK)
	metrics := string(callAs(t, "", "GET", u["hsm"]+"/metrics", "", http.StatusOK))
	const want = `hms_auth_decisions_total{decision="unauthenticated",refused="false"} `
	i := strings.Index(metrics, want)
	if i < 0 {
		t.Fatalf("hsm /metrics lacks %s:\n%s", want, metrics)
	}
	if n, _ := strconv.Atoi(strings.Fields(metrics[i+len(want):])[0]); n < 2 {
		t.Errorf("hsm counted %d requests it would refuse, want the components read and the scrape", n)
	}
}
