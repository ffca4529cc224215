package redfishsim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// serve runs one request through b's handler with the test credentials.
func serve(b *BMC, method, path string, body []byte) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "/", bytes.NewReader(body))
	r.URL.Path = path
	r.SetBasicAuth(testUser, testPass)
	w := httptest.NewRecorder()
	b.ServeHTTP(w, r)
	return w
}

// FuzzPatchAndReset feeds untrusted request bodies to PATCH and to the Reset
// action: the BMC must answer with a Redfish status, never panic, and keep
// every resource valid JSON; refused requests change nothing.
func FuzzPatchAndReset(f *testing.F) {
	for _, s := range []string{`{"NTP":{"ProtocolEnabled":true}}`, `{"ResetType":"ForceOff"}`, `{"ResetType":"PushPowerButton"}`,
		`{"Password":"x","UserName":"y"}`, `{"Id":"1"}`, `[]`, `null`, `{"a":1}{"b":2}`, `{"HostName":null}`, `{"PowerState":"Off"}`, "\xff"} {
		f.Add([]byte(s))
	}
	tree := Generate("x3000c0s1b0", 1)
	paths := []string{"/redfish/v1/Managers/BMC/NetworkProtocol", "/redfish/v1/AccountService/Accounts/1", "/redfish/v1/Systems/Node0"}
	f.Fuzz(func(t *testing.T, body []byte) {
		fresh := func() *BMC {
			b, err := New(Config{Xname: "x3000c0s1b0", Tree: tree, User: testUser, Password: testPass})
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		for _, p := range paths {
			b := fresh() // a PATCH of the account may change the login
			before := serve(b, "GET", p, nil).Body.String()
			w := serve(b, "PATCH", p, body)
			switch w.Code {
			case http.StatusOK:
			case http.StatusBadRequest:
				if after := serve(b, "GET", p, nil).Body.String(); after != before {
					t.Fatalf("refused PATCH of %s changed it:\n%s\n%s", p, before, after)
				}
			default:
				t.Fatalf("PATCH %s: status %d", p, w.Code)
			}
			if g := serve(b, "GET", p, nil); !json.Valid(g.Body.Bytes()) {
				t.Fatalf("after PATCH %s: %d %q", p, g.Code, g.Body.String())
			}
		}
		b := fresh()
		w := serve(b, "POST", "/redfish/v1/Systems/Node0/Actions/ComputerSystem.Reset", body)
		if w.Code != http.StatusNoContent && w.Code != http.StatusBadRequest {
			t.Fatalf("reset: status %d %s", w.Code, w.Body.String())
		}
		var sys struct{ PowerState string }
		if g := serve(b, "GET", "/redfish/v1/Systems/Node0", nil); g.Code != http.StatusOK {
			t.Fatalf("GET system after reset: %d", g.Code)
		} else {
			if err := json.Unmarshal(g.Body.Bytes(), &sys); err != nil || (sys.PowerState != "On" && sys.PowerState != "Off") {
				t.Fatalf("PowerState %q (%v)", sys.PowerState, err)
			}
		}
	})
}

// FuzzPath checks the mapping from untrusted request paths to resources:
// canonical paths are absolute, clean and stable, a request never reaches
// outside the tree, and fault patterns never panic.
func FuzzPath(f *testing.F) {
	for _, s := range []string{"/redfish/v1/", "/redfish/v1/../../etc/passwd", "//redfish//v1/Systems/", "/redfish/v1/Systems/1?$expand=*", "redfish/v1/$metadata#x", "/redfish/v1/Systems/%2e%2e", ""} {
		f.Add(s, "/redfish/v1/*/EthernetInterfaces")
	}
	b, err := New(Config{Tree: Generate("x3000c0s1b0", 1), User: testUser, Password: testPass})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p, pattern string) {
		c := Canonical(p)
		if !strings.HasPrefix(c, "/") || strings.Contains(c, "//") || strings.Contains(c, "/../") || strings.HasSuffix(c, "/..") {
			t.Fatalf("Canonical(%q) = %q is not clean", p, c)
		}
		if Canonical(c) != c {
			t.Fatalf("Canonical is not idempotent: %q -> %q -> %q", p, c, Canonical(c))
		}
		_ = matchPattern(pattern, c)
		if strings.ContainsAny(p, "\x00") || !strings.HasPrefix(p, "/") {
			return
		}
		w := serve(b, "GET", p, nil)
		if w.Code == http.StatusOK && !b.tree.Has(c) && c != "/redfish" && c != sessionsPath {
			t.Fatalf("GET %q answered 200 for %q, which is not in the tree", p, c)
		}
	})
}

// FuzzExpand checks token expansion on arbitrary bodies and xnames: it never
// panics, leaves bodies without a token untouched, and keeps JSON valid.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{`{"MACAddress":"@@mac:s0:eth0@@"}`, `@@`, `@@@@`, `@@xname`, `a@@uuid:x@@b@@serial:y@@c`} {
		f.Add([]byte(s), "x3000c0s1b0")
		f.Add([]byte(s), `x"\`)
	}
	f.Fuzz(func(t *testing.T, body []byte, xname string) {
		out := expand(body, xname, nil)
		if !bytes.Contains(body, []byte(tokenMark)) && !bytes.Equal(out, body) {
			t.Fatalf("expand changed a body without tokens: %q -> %q", body, out)
		}
		if json.Valid(body) && !json.Valid(out) {
			t.Fatalf("expand(%q, %q) = %q is not JSON", body, xname, out)
		}
	})
}
