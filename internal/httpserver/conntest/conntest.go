// Package conntest checks, in a daemon's tests, that its HTTP server caps
// the connections it holds open (-max-connections): up to the cap each
// connection is served, the next one gets the bare 503.
package conntest

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/cli"
)

// Daemon is what CheckFlag needs of a started daemon.
type Daemon interface {
	URL() string
	Run(ctx context.Context) error
}

// CheckFlag checks that -max-connections reaches the server of the daemon
// binary names: register declares the daemon's flags on a fresh set and
// returns the function that starts it once they are parsed (from -listen
// on loopback, -db in t.TempDir() and -max-connections 2). The daemon is
// run, checked with CheckCap and stopped.
func CheckFlag(t *testing.T, binary string, register func(*cli.FlagSet) func() (Daemon, error)) {
	t.Helper()
	f := cli.NewFlagSet(binary, func(string) string { return "" }, io.Discard)
	start := register(f)
	args := []string{"-listen", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), binary+".db"), "-max-connections", "2"}
	if err := f.Parse(args); err != nil {
		t.Fatal(err)
	}
	d, err := start()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	CheckCap(t, d.URL(), 2)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// CheckCap holds max connections to the server at base (a URL such as
// http://127.0.0.1:8376), each proven accepted by one answered request, and
// fails t unless one more connection is answered 503 "too many open
// connections". Any status counts as served: the path need not exist.
func CheckCap(t testing.TB, base string, max int) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	for range max {
		c := dial(t, u.Host)
		if _, err := io.WriteString(c, "GET /conntest HTTP/1.1\r\nHost: conntest\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("connection within the cap of %d not served: %v", max, err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			t.Fatalf("connection within the cap of %d answered 503", max)
		}
	}
	resp, err := http.ReadResponse(bufio.NewReader(dial(t, u.Host)), nil)
	if err != nil {
		t.Fatalf("connection over the cap of %d got no answer: %v", max, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "too many open connections") {
		t.Fatalf("connection over the cap of %d: %d %s", max, resp.StatusCode, body)
	}
}

func dial(t testing.TB, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
