package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/mtls/mtlstest"
)

// TestUpMTLS: hms up -tls-cert -tls-key -client-ca: every daemon serves
// HTTPS and asks for a client certificate, and the daemons reach each
// other with theirs (hmnfd and bss subscribe to hsm before "ready"; hsm
// reads a new node's NID from SLS). A caller with a certificate of the CA
// is served, one without is refused.
func TestUpMTLS(t *testing.T) {
	ca := mtlstest.NewCA(t)
	cert, key := ca.Issue("hms-up")
	u := suiteUpWith(t, t.TempDir(), func(string) string { return "" }, "-tls-cert", cert, "-tls-key", key, "-client-ca", ca.File())
	admin, anonymous := ca.Client("admin"), ca.Anonymous()
	for _, d := range []string{"sls", "hsm", "hbtd", "hmnfd", "bss", "pcs", "bos", "nodes", "reds"} {
		if !strings.HasPrefix(u[d], "https://") {
			t.Errorf("%s listens on %s, want https", d, u[d])
			continue
		}
		if resp, err := anonymous.Get(u[d] + "/metrics"); err == nil {
			resp.Body.Close()
			t.Errorf("%s served a caller without a certificate: %s", d, resp.Status)
		}
		resp, err := admin.Get(u[d] + "/metrics")
		if err != nil {
			t.Errorf("%s with a certificate of the CA: %v", d, err)
			continue
		}
		resp.Body.Close()
	}
	const n0 = "x3000c0s1b0n0"
	send(t, admin, "POST", u["sls"]+"/v1/hardware", `{"Xname":"`+n0+`","Class":"River","ExtraProperties":{"NID":17,"Role":"Compute"}}`, http.StatusCreated)
	send(t, admin, "POST", u["hsm"]+"/hsm/v2/State/Components", `{"Components":[{"ID":"`+n0+`","State":"On"}]}`, http.StatusNoContent)
	var c struct{ NID int }
	json.Unmarshal(send(t, admin, "GET", u["hsm"]+"/hsm/v2/State/Components/"+n0, "", http.StatusOK), &c)
	if c.NID != 17 {
		t.Errorf("hsm has NID %d, want 17 read from SLS over mTLS", c.NID)
	}
}
