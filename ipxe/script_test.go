package ipxe

import (
	"net/http"
	"strings"
	"testing"
)

// scriptSetup stores the entries the script shapes are built from: a node
// with its own entry, one booting its role's, one Default's, and the
// Unknown-x86_64 discovery image.
func scriptSetup(t *testing.T) (*harness, map[string]string) {
	t.Helper()
	h := newHarness(t)
	h.nodes(
		node("x3000c0s1b0n0", "Compute", "", 1, []string{"aa:bb:cc:00:00:01"}),
		node("x3000c0s2b0n0", "Application", "UAN", 2, []string{"aa:bb:cc:00:00:02"}),
		node("x3000c0s3b0n0", "Storage", "", 3, nil),
		node("x3000c0s4b0n0", "Compute", "", 4, []string{"aa:bb:cc:00:00:04"}),
	)
	tokens := map[string]string{}
	for _, body := range []string{
		`{"hosts":["x3000c0s1b0n0"],"kernel":"http://s3/k1","initrd":"http://s3/i1","params":"console=ttyS0 initrd=old.img nid=99 quiet"}`,
		`{"hosts":["Application"],"kernel":"http://s3/uan-k","params":""}`,
		`{"hosts":["Default"],"kernel":"http://s3/dk","initrd":"http://s3/di","params":"root=live:x xname=keep"}`,
		`{"hosts":["Unknown-x86_64"],"kernel":"http://s3/disc-k","initrd":"http://s3/disc-i","params":"metal.discovery"}`,
		`{"macs":["aa:bb:cc:00:00:04"],"kernel":"http://s3/mk","params":"bymac"}`,
		`{"kernel":"http://s3/k1","params":"kparam=1"}`,
	} {
		hdr, _ := h.mustDo(t, http.MethodPut, "/boot/v1/bootparameters", body, http.StatusOK)
		if tok := hdr.Get(tokenHeader); tok != "" {
			tokens[tok] = "TOKEN"
		}
	}
	return h, tokens
}

func TestBootscriptShapes(t *testing.T) {
	h, tokens := scriptSetup(t)
	tests := []struct {
		name, query string
		status      int
	}{
		{name: "own_entry_by_mac", query: "mac=aa:bb:cc:00:00:01&retry=2", status: 200},
		{name: "own_entry_by_name", query: "name=x3000c0s1b0n0", status: 200},
		{name: "role_no_initrd_by_nid", query: "nid=2", status: 200},
		{name: "default_no_mac", query: "name=x3000c0s3b0n0&retry=notanumber", status: 200},
		{name: "mac_entry", query: "mac=AA:BB:CC:00:00:04", status: 200},
		{name: "unknown_chain", query: "mac=de:ad:be:ef:00:01", status: 200},
		{name: "unknown_chain_ts", query: "name=x9000c0s0b0n0&ts=1795500977", status: 200},
		{name: "unknown_arch", query: "mac=de:ad:be:ef:00:01&arch=x86_64&ts=1795500977", status: 200},
		{name: "unknown_arch_missing", query: "mac=de:ad:be:ef:00:01&arch=arm64", status: 404},
		{name: "no_key", query: "nid=-1&retry=1", status: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr, body := h.mustDo(t, http.MethodGet, "/boot/v1/bootscript?"+tt.query, "", tt.status)
			if tt.status == 200 && hdr.Get("Content-Type") != "text/plain; charset=UTF-8" {
				t.Errorf("Content-Type %q", hdr.Get("Content-Type"))
			}
			for tok, repl := range tokens {
				body = strings.ReplaceAll(body, tok, repl)
			}
			golden(t, "bootscript_"+tt.name, body)
		})
	}
}

func TestBootscriptHistory(t *testing.T) {
	h, _ := scriptSetup(t)
	h.mustDo(t, http.MethodGet, "/boot/v1/bootscript?mac=aa:bb:cc:00:00:01", "", 200)
	_, body := h.mustDo(t, http.MethodGet, "/boot/v1/endpoint-history?name=x3000c0s1b0n0&endpoint=bootscript", "", 200)
	want := `[{"name":"x3000c0s1b0n0","endpoint":"bootscript","last_epoch":1795500000}]` + "\n"
	if body != want {
		t.Errorf("endpoint-history = %s, want %s", body, want)
	}
	_, body = h.mustDo(t, http.MethodGet, "/boot/v1/endpoint-history?name=x3000c0s2b0n0&endpoint=user-data", "", 200)
	if want := `[{"name":"x3000c0s2b0n0","endpoint":"user-data","last_epoch":0}]` + "\n"; body != want {
		t.Errorf("endpoint-history for a node never seen = %s, want %s", body, want)
	}
	h.mustDo(t, http.MethodGet, "/boot/v1/endpoint-history?endpoint=bootscript", "", 400) // hms-bss: 500
}

func TestHasParam(t *testing.T) {
	tests := []struct {
		p, prefix string
		want      bool
	}{
		{p: "", prefix: "xname=", want: false},
		{p: "a b", prefix: "nid=", want: false},
		{p: "a nid=99", prefix: "nid=", want: true},
		{p: "nid=99", prefix: "nid=", want: true},
		{p: "anid=99", prefix: "nid=", want: false},
		{p: "anid=99\tnid=1", prefix: "nid=", want: true},
	}
	for _, tt := range tests {
		if got := hasParam(tt.p, tt.prefix); got != tt.want {
			t.Errorf("hasParam(%q, %q) = %v, want %v", tt.p, tt.prefix, got, tt.want)
		}
	}
}

func FuzzBootscriptQuery(f *testing.F) {
	for _, q := range []string{"mac=aa:bb:cc:00:00:01", "nid=0x10&retry=9", "name=%00&arch=x", "mac=,,,&nid=-1", "ts=1&arch="} {
		f.Add(q)
	}
	h := newHarness(f)
	f.Fuzz(func(t *testing.T, q string) {
		req, err := http.NewRequest(http.MethodGet, "/boot/v1/bootscript", nil)
		if err != nil {
			t.Skip()
		}
		req.URL.RawQuery = q
		rec := newRecorder()
		NewAPI(h.svc, nil, nil, Version).Handler().ServeHTTP(rec, req)
		if st := rec.Code; st != 200 && st != 400 && st != 404 {
			t.Fatalf("query %q: status %d", q, st)
		}
	})
}

// TestBootscriptMACCannotAddLines: a mac= carrying a newline and an iPXE command
// is escaped in the chain line it is echoed into, never a line of its own.
func TestBootscriptMACCannotAddLines(t *testing.T) {
	h, _ := scriptSetup(t)
	_, body := h.mustDo(t, http.MethodGet, "/boot/v1/bootscript?mac=de:ad%0Ashell", "", http.StatusOK)
	for _, line := range strings.Split(body, "\n") {
		if strings.TrimSpace(line) == "shell" {
			t.Fatalf("the asked mac added a script line:\n%s", body)
		}
	}
	if !strings.Contains(body, "mac=de%3Aad%0Ashell") {
		t.Errorf("chain line does not carry the escaped mac:\n%s", body)
	}
}

// TestBootscriptDiscoveryToken: with a discovery token, the unknown nodes'
// entry (the discovery image) carries it on its kernel command line for
// reds's node-side routes; a known node's script never does.
func TestBootscriptDiscoveryToken(t *testing.T) {
	const tok = "disc-token-0123456789"
	h := newHarness(t, func(c *Config) { c.Script.DiscoveryToken = tok })
	h.nodes(node("x3000c0s1b0n0", "Compute", "", 1, []string{"aa:bb:cc:00:00:01"}))
	for _, body := range []string{
		`{"hosts":["Unknown-x86_64"],"kernel":"http://s3/disc-k","params":"metal.discovery"}`,
		`{"hosts":["Compute"],"kernel":"http://s3/k","params":"quiet"}`,
	} {
		h.mustDo(t, http.MethodPut, "/boot/v1/bootparameters", body, http.StatusOK)
	}
	_, unknown := h.mustDo(t, http.MethodGet, "/boot/v1/bootscript?mac=de:ad:be:ef:00:01&arch=x86_64&ts=1", "", 200)
	if !strings.Contains(unknown, " "+DiscoveryParam+"="+tok+" || goto boot_retry\n") {
		t.Errorf("discovery image script without the token:\n%s", unknown)
	}
	_, known := h.mustDo(t, http.MethodGet, "/boot/v1/bootscript?mac=aa:bb:cc:00:00:01", "", 200)
	if strings.Contains(known, tok) {
		t.Errorf("a known node's script carries the discovery token:\n%s", known)
	}
}
