package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/xname"
)

// route is one method and path of a fuzzed family; "{}" in the path is
// replaced by the fuzzed path parameter. ctype is the request's
// Content-Type (JSON when empty). A read-only route must change nothing,
// whatever it answers.
type route struct {
	method, path, ctype string
	readOnly            bool
}

func (r route) key() string { return r.method + " " + r.path }

// seed is one input of a target: the route (by key), the path parameter,
// the raw query and the body.
type seed struct {
	route, param, query, body string
}

// target is a started daemon under fuzz.
type target struct {
	base   string
	client *http.Client
	// dumps are the GETs whose answers together are the daemon's state
	// ("path|prefix": only the lines starting with prefix).
	dumps []string
	// watch, if set, names more GETs for one request (hbtd's per-node
	// states, for the xnames the request mentions).
	watch func(param string, body []byte) []string
	// settle, if set, waits until the daemon's background work that earlier
	// accepted requests started is over (HSM's BMC walks).
	settle func(t *testing.T)
}

// fuzzRoutes runs the seeds, then generated inputs, through tg: each input
// picks a route (sel modulo their number), a path parameter, a query and a
// body, and is checked by tg.check.
func fuzzRoutes(f *testing.F, tg *target, routes []route, seeds []seed) {
	f.Helper()
	index := map[string]uint8{}
	for i, r := range routes {
		index[r.key()] = uint8(i)
	}
	for _, s := range seeds {
		i, ok := index[s.route]
		if !ok {
			f.Fatalf("seed names route %q, which the target does not fuzz", s.route)
		}
		f.Add(i, s.param, s.query, []byte(s.body))
	}
	if a, b := tg.dump(f, nil), tg.dump(f, nil); a != b {
		f.Fatalf("two dumps with nothing in between differ (-first +second):\n%s", cmp.Diff(a, b))
	}
	f.Fuzz(func(t *testing.T, sel uint8, param, query string, body []byte) {
		tg.check(t, routes[int(sel)%len(routes)], param, query, body)
	})
}

// check sends one request and asserts the rules of the package: no 5xx, no
// dropped connection, and a refused or read-only request changes no dump.
func (tg *target) check(t *testing.T, r route, param, query string, body []byte) {
	t.Helper()
	if tg.settle != nil {
		tg.settle(t)
	}
	var extra []string
	if tg.watch != nil {
		extra = tg.watch(param, body)
	}
	before := tg.dump(t, extra)
	path := strings.ReplaceAll(r.path, "{}", url.PathEscape(param))
	status, answer := tg.do(t, r.method, path, sendableQuery(query), r.ctype, body)
	if status >= 500 {
		t.Fatalf("%s %s?%s %q: %d %s", r.method, path, query, body, status, answer)
	}
	if status < 300 && !r.readOnly {
		return
	}
	if after := tg.dump(t, extra); after != before {
		t.Fatalf("%s %s?%s %q answered %d %s but changed the state (-before +after):\n%s",
			r.method, path, query, body, status, answer, cmp.Diff(before, after))
	}
}

// sendableQuery drops what a client cannot put in a request line raw
// (spaces, control bytes, '#'); everything else, %-escapes included, goes
// to the daemon's query parser as generated.
func sendableQuery(q string) string {
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r == 0x7f || r == '#' || r == '\uFFFD' {
			return -1
		}
		return r
	}, q)
}

// do sends one request and returns the status and the answer. No answer at
// all (the daemon dropped the connection, as net/http does when a handler
// panics) fails t.
func (tg *target) do(t testing.TB, method, path, query, ctype string, body []byte) (int, string) {
	t.Helper()
	u := tg.base + path
	req, err := http.NewRequestWithContext(t.Context(), method, u, bytes.NewReader(body))
	if err != nil {
		t.Skipf("not a request a client can send: %v", err)
	}
	req.URL.RawQuery = query
	if ctype == "" {
		ctype = "application/json"
	}
	req.Header.Set("Content-Type", ctype)
	resp, err := tg.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s?%s %q: no answer: %v", method, path, query, body, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s?%s: answer cut: %v", method, path, query, err)
	}
	return resp.StatusCode, string(out)
}

// linesWith keeps the lines of s that start with prefix.
func linesWith(s, prefix string) string {
	var out []string
	for l := range strings.Lines(s) {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// dump is every dump GET's answer, one after the other. A dump
// "path|prefix" keeps only the answer's lines starting with prefix (one
// metric of /metrics).
func (tg *target) dump(t testing.TB, extra []string) string {
	t.Helper()
	var b strings.Builder
	for _, p := range append(tg.dumps, extra...) {
		p, keep, filtered := strings.Cut(p, "|")
		path, query, _ := strings.Cut(p, "?")
		status, out := tg.do(t, http.MethodGet, path, query, "", nil)
		if status != http.StatusOK {
			t.Fatalf("dump GET %s: %d %s", p, status, out)
		}
		if filtered {
			out = linesWith(out, keep)
		}
		b.WriteString(p + "\n" + out + "\n")
	}
	return b.String()
}

// mustDo sends a request that sets state up and fails t unless it is
// answered want (0: any 2xx).
func (tg *target) mustDo(t testing.TB, method, path, body string, want int) string {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, tg.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := tg.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want && (want != 0 || resp.StatusCode/100 != 2) {
		t.Fatalf("setup %s %s: %d %s, want %d", method, path, resp.StatusCode, out, want)
	}
	return string(out)
}

// run runs d until the test ends, and waits for it to stop before the
// test's temporary directory goes.
func run(tb testing.TB, d interface{ Run(context.Context) error }) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("daemon stopped with %v", err)
		}
	})
}

// newClient is the test's client: no redirects followed (a redirect is an
// answer like any other) and no proxy from the environment.
func newClient() *http.Client {
	return &http.Client{
		Transport:     &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4},
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// loopbackOnly is the client daemons under fuzz use for their own outgoing
// requests (BMC walks, HSM reports): a generated URL naming any other host
// is refused before a name is looked up or a packet sent.
func loopbackOnly() *http.Client {
	var d net.Dialer
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			if ip, err := netip.ParseAddr(host); err != nil || !ip.IsLoopback() {
				return nil, errors.New("fuzz: outgoing connections go to loopback only")
			}
			return d.DialContext(ctx, network, addr)
		}}}
}

// xnamesIn lists the valid xnames among the path parameter and the strings
// of a JSON body (whatever its shape, and however malformed after them).
func xnamesIn(param string, body []byte) []string {
	var out []string
	add := func(s string) {
		if xname.Valid(s) {
			out = append(out, xname.Normalize(s))
		}
	}
	add(param)
	dec := json.NewDecoder(bytes.NewReader(body))
	for len(out) < 32 {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if s, ok := tok.(string); ok {
			add(s)
		}
	}
	return out
}
