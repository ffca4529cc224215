package ipxe

import (
	"io"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// cloudInitSetup: the test client (127.0.0.1) is node x3000c0s1b0n0; 10.0.0.2,
// named by X-Forwarded-For, is x3000c0s2b0n0, which has no entry of its own.
// opts change the service's Config (TrustedProxies).
func cloudInitSetup(t *testing.T, opts ...func(*Config)) *harness {
	t.Helper()
	h := newHarness(t, opts...)
	h.nodes(node("x3000c0s1b0n0", "Compute", "Worker", 1, []string{"aa:bb:cc:00:00:01"}, "127.0.0.1"),
		node("x3000c0s2b0n0", "Compute", "", 2, nil, "10.0.0.2"))
	for _, body := range []string{
		`{"hosts":["Global"],"cloud-init":{"meta-data":{"foo":{"bar":"baz"}}}}`,
		`{"hosts":["Worker"],"cloud-init":{"meta-data":{"mk":"worker","wk":1},"user-data":{"packages":["vim"],"runcmd":["a"]}}}`,
		`{"hosts":["x3000c0s1b0n0"],"kernel":"http://k","cloud-init":{"meta-data":{"mk":"mv"},"user-data":{"runcmd":["b"]}}}`,
		`{"hosts":["Default"],"kernel":"http://dk","cloud-init":{"meta-data":{"dk":"dv"}}}`,
	} {
		h.mustDo(t, http.MethodPut, "/boot/v1/bootparameters", body, http.StatusOK)
	}
	return h
}

var instanceID = regexp.MustCompile(`"instance-id":"([a-z0-9]+)-[0-9a-f]{12}"`)

// trustLoopback makes the test client a trusted proxy.
func trustLoopback(c *Config) {
	c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
}

func TestMetaDataBySourceIP(t *testing.T) {
	h := cloudInitSetup(t, trustLoopback)
	tests := []struct {
		name, path, xff string
		status          int
		want            string
	}{
		{name: "own node merged with subrole and Global", path: "/meta-data", status: 200,
			want: `{"Global":{"foo":{"bar":"baz"}},"instance-id":"x3000c0s1b0n0-ID","local-hostname":"x3000c0s1b0n0","mk":"mv","shasta-role":"Worker","shasta-type":"Compute","wk":1}` + "\n"},
		{name: "forwarded caller boots Default", path: "/meta-data", xff: "192.0.2.1, 10.0.0.2", status: 200,
			want: `{"Global":{"foo":{"bar":"baz"}},"dk":"dv","instance-id":"x3000c0s2b0n0-ID","local-hostname":"x3000c0s2b0n0","shasta-role":"","shasta-type":"Compute"}` + "\n"},
		{name: "unknown caller", path: "/meta-data", xff: "10.9.9.9", status: 200,
			want: `{"Global":{"foo":{"bar":"baz"}},"dk":"dv","instance-id":"default-ID"}` + "\n"},
		{name: "key", path: "/meta-data?key=Global.foo.bar", status: 200, want: `"baz"` + "\n"},
		{name: "key of node", path: "/meta-data?key=mk", status: 200, want: `"mv"` + "\n"},
		{name: "missing key", path: "/meta-data?key=Global.nope", status: 404, want: `"detail":"Not Found"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, h.srv.URL+tt.path, nil)
			if tt.xff != "" {
				req.Header.Set("X-Forwarded-For", tt.xff)
			}
			resp, err := h.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			got := instanceID.ReplaceAllString(string(raw), `"instance-id":"$1-ID"`)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, got)
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("body\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestUserDataAndPhoneHome(t *testing.T) {
	h := cloudInitSetup(t)
	hdr, body := h.mustDo(t, http.MethodGet, "/user-data", "", 200)
	want := "#cloud-config\nlocal-hostname: x3000c0s1b0n0\npackages:\n- vim\nruncmd:\n- b\n"
	if diff := cmp.Diff(want, body); diff != "" || hdr.Get("Content-Type") != "text/yaml" {
		t.Errorf("user-data (-want +got):\n%s\nContent-Type %q", diff, hdr.Get("Content-Type"))
	}
	_, body = h.mustDo(t, http.MethodGet, "/boot/v1/endpoint-history?name=x3000c0s1b0n0", "", 200)
	if want := `[{"name":"x3000c0s1b0n0","endpoint":"user-data","last_epoch":1795500000}]` + "\n"; body != want {
		t.Errorf("endpoint-history %s, want %s", body, want)
	}
	_, body = h.mustDo(t, http.MethodPost, "/phone-home", `{"pub_key_rsa":"ssh-rsa AAA","hostname":"nid000001"}`, 200)
	want = `{"hosts":["x3000c0s1b0n0"],"cloud-init":{"meta-data":{"mk":"mv"},"user-data":{"runcmd":["b"]},"phone-home":{"pub_key_dsa":"","pub_key_rsa":"ssh-rsa AAA","pub_key_ecdsa":"","instance_id":"","hostname":"nid000001","fqdn":""}}}` + "\n"
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("phone-home (-want +got):\n%s", diff)
	}
	h.mustDo(t, http.MethodPost, "/phone-home", ``, 400)
	h.nodes(node("x3000c0s9b0n0", "Compute", "", 9, nil, "127.0.0.1"))
	h.mustDo(t, http.MethodPost, "/phone-home", `{}`, 404)
}

func TestCallerIP(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("fd00::/8")}
	tests := []struct {
		name, peer string
		xff        []string // one X-Forwarded-For header each
		trusted    []netip.Prefix
		want       string // "" = no caller
	}{
		{name: "no proxies: the peer, whatever it forwards", peer: "10.1.0.5:4000", xff: []string{"10.0.0.2"}, want: "10.1.0.5"},
		{name: "untrusted peer's claim ignored", peer: "10.9.0.1:4000", xff: []string{"10.0.0.2"}, trusted: proxies, want: "10.9.0.1"},
		{name: "trusted proxy names the client", peer: "10.1.0.5:4000", xff: []string{"10.0.0.2"}, trusted: proxies, want: "10.0.0.2"},
		{name: "client's own claim left of the proxy's entry", peer: "10.1.0.5:4000", xff: []string{"10.0.0.2, 10.9.9.9"}, trusted: proxies, want: "10.9.9.9"},
		{name: "trusted hops skipped", peer: "10.1.0.5:4000", xff: []string{"10.0.0.2, 10.1.0.7", "10.1.0.6"}, trusted: proxies, want: "10.0.0.2"},
		{name: "all hops trusted: the leftmost", peer: "10.1.0.5:4000", xff: []string{"10.1.0.9, 10.1.0.7"}, trusted: proxies, want: "10.1.0.9"},
		{name: "trusted proxy without header", peer: "10.1.0.5:4000", trusted: proxies, want: "10.1.0.5"},
		{name: "garbage from a trusted proxy", peer: "10.1.0.5:4000", xff: []string{"10.0.0.2, nonsense"}, trusted: proxies, want: ""},
		{name: "IPv6 proxy, v4-mapped client", peer: "[fd00::1]:4000", xff: []string{"::ffff:10.0.0.2"}, trusted: proxies, want: "10.0.0.2"},
		{name: "v4-mapped peer", peer: "[::ffff:10.9.0.1]:4000", xff: []string{"10.0.0.2"}, trusted: proxies, want: "10.9.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &http.Request{RemoteAddr: tt.peer, Header: http.Header{}}
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			got, ok := callerIP(r, tt.trusted)
			if (tt.want == "" && ok) || (tt.want != "" && (!ok || got.String() != tt.want)) {
				t.Errorf("callerIP = %v, %v; want %q", got, ok, tt.want)
			}
		})
	}
}

// TestForwardedForFromAnyoneIgnored: without -trusted-proxies, a client
// naming another node's address in X-Forwarded-For gets its own meta-data
// and phones home into its own entry, not the other node's.
func TestForwardedForFromAnyoneIgnored(t *testing.T) {
	h := cloudInitSetup(t)
	h.mustDo(t, http.MethodPut, "/boot/v1/bootparameters", `{"hosts":["x3000c0s2b0n0"],"kernel":"http://k","cloud-init":{"meta-data":{"secret":"s2"}}}`, http.StatusOK)
	for _, path := range []string{"/meta-data", "/user-data", "/phone-home"} {
		method := http.MethodGet
		if path == "/phone-home" {
			method = http.MethodPost
		}
		req, _ := http.NewRequestWithContext(t.Context(), method, h.srv.URL+path, strings.NewReader(`{"pub_key_rsa":"ssh-rsa EVIL"}`))
		req.Header.Set("X-Forwarded-For", "10.0.0.2")
		resp, err := h.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || strings.Contains(string(body), "s2") || strings.Contains(string(body), "x3000c0s2b0n0") {
			t.Errorf("%s with a forged X-Forwarded-For: %d %s", path, resp.StatusCode, body)
		}
	}
	if _, body := h.mustDo(t, http.MethodGet, "/boot/v1/bootparameters?name=x3000c0s2b0n0", "", http.StatusOK); strings.Contains(body, "EVIL") {
		t.Errorf("the forged phone-home reached x3000c0s2b0n0: %s", body)
	}
}
