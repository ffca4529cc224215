package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/authtest"
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
	node, other := is.Token(n0, auth.Node), is.Token("x3000c0s2b0n0", auth.Node)

	callAs(t, "", "POST", u["sls"]+"/v1/hardware", `{"Xname":"`+n0+`","Class":"River","ExtraProperties":{"NID":17,"Role":"Compute"}}`, http.StatusUnauthorized)
	callAs(t, viewer, "POST", u["sls"]+"/v1/hardware", `{"Xname":"`+n0+`","Class":"River","ExtraProperties":{"NID":17,"Role":"Compute"}}`, http.StatusForbidden)
	callAs(t, operator, "POST", u["sls"]+"/v1/hardware", `{"Xname":"`+n0+`","Class":"River","ExtraProperties":{"NID":17,"Role":"Compute"}}`, http.StatusCreated)
	callAs(t, "", "POST", u["hsm"]+"/hsm/v2/State/Components", `{"Components":[{"ID":"`+n0+`","State":"On"}]}`, http.StatusUnauthorized)
	callAs(t, operator, "POST", u["hsm"]+"/hsm/v2/State/Components", `{"Components":[{"ID":"`+n0+`","State":"On"}]}`, http.StatusNoContent)
	beat := `{"Component":"` + n0 + `","Hostname":"nid17","NID":"17","Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"}`
	callAs(t, other, "POST", u["hbtd"]+"/hmi/v1/heartbeat", beat, http.StatusForbidden)
	callAs(t, node, "POST", u["hbtd"]+"/hmi/v1/heartbeat", beat, http.StatusOK)
	callAs(t, "", "GET", u["hsm"]+"/hsm/v2/service/ready", "", http.StatusOK)

	// hbtd tells hsm (with the suite's token) in the background: poll,
	// bounded, until the node is Ready.
	var c struct {
		State, Role string
		NID         int
	}
	for i := 0; ; i++ {
		json.Unmarshal(callAs(t, viewer, "GET", u["hsm"]+"/hsm/v2/State/Components/"+n0, "", http.StatusOK), &c)
		if c.State == "Ready" {
			break
		}
		if i == 3000 {
			t.Fatalf("node never went Ready in hsm: %+v", c)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if c.NID != 17 || c.Role != "Compute" {
		t.Errorf("hsm has %+v, want NID 17 and Role Compute read from SLS with the suite's token", c)
	}
	callAs(t, node, "GET", u["hsm"]+"/hsm/v2/State/Components/"+n0, "", http.StatusOK)
	callAs(t, node, "GET", u["hsm"]+"/hsm/v2/State/Components/x3000c0s2b0n0", "", http.StatusForbidden)
	callAs(t, operator, "PATCH", u["hbtd"]+"/hmi/v1/params", `{"Nosm":"1"}`, http.StatusForbidden)
}
