package ipxe

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/hmsuite/hms/internal/auth/authtest"
	"github.com/hmsuite/hms/internal/httpserver"
)

// benchNodes is how many known nodes the bootscript benchmarks cache.
const benchNodes = 10000

// benchAPI is a service with benchNodes nodes cached, each booting the
// Compute tag's kernel, initrd and parameters, and the paths of their
// scripts.
func benchAPI(b *testing.B) (*API, []string) {
	h := newHarness(b)
	nodes := make([]*Node, benchNodes)
	for i := range nodes {
		nodes[i] = node(fmt.Sprintf("x%dc0s%db0n%d", 1000+i/512, i/8%64, i%8), "Compute", "", i+1,
			[]string{fmt.Sprintf("02:00:00:00:%02x:%02x", i/256, i%256)})
	}
	h.nodes(nodes...)
	h.mustDo(b, http.MethodPut, "/boot/v1/bootparameters",
		`{"hosts":["Compute"],"kernel":"http://k/vmlinuz","initrd":"http://k/initrd","params":"console=ttyS0 quiet"}`, 200)
	paths := make([]string, benchNodes)
	for i := range paths {
		paths[i] = fmt.Sprintf("/boot/v1/bootscript?mac=02:00:00:00:%02x:%02x", i/256, i%256)
	}
	return NewAPI(h.svc, nil, nil, Version), paths
}

// BenchmarkBootscript is the handler cost of one known node's script, with
// 10,000 nodes cached (scripts/bench.d/bss.sh measures it over HTTP). The
// handler is called bare, so its Mux puts the problem style in a copy of
// each request, which the server's middleware spares (BenchmarkBootscriptHTTP).
func BenchmarkBootscript(b *testing.B) {
	api, paths := benchAPI(b)
	benchScripts(b, api.Handler(), paths)
}

// BenchmarkBootscriptGuarded is BenchmarkBootscript behind the auth guard
// in enforce mode: the boot script is an open route, so no token is
// checked; the difference is the guard's routing.
func BenchmarkBootscriptGuarded(b *testing.B) {
	api, paths := benchAPI(b)
	guarded, err := authtest.New(b).Config().Wrap(api.Handler(), AuthTable(), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	benchScripts(b, guarded, paths)
}

// benchScripts fetches the scripts of paths from handler, in parallel.
func benchScripts(b *testing.B, handler http.Handler, paths []string) {
	reqs := make([]*http.Request, len(paths))
	for i, p := range paths {
		reqs[i] = httptest.NewRequest(http.MethodGet, p, nil)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, reqs[i%len(reqs)])
			if rec.Code != 200 {
				b.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			i++
		}
	})
}

// BenchmarkBootscriptHTTP is the whole server path of a script, as bss.sh
// drives it but in one process: the daemon's middleware (httpserver.Serve)
// over loopback, 64 keep-alive connections each sending its next request
// once the answer to the last is read, by a client that does the least
// work (no net/http client). Allocations per op include net/http's own.
// The null sub-benchmark is bss.sh's ceiling, a bare net/http server
// answering 200 with no body, under the same client.
func BenchmarkBootscriptHTTP(b *testing.B) {
	api, paths := benchAPI(b)
	reqs := make([][]byte, len(paths))
	for i, p := range paths {
		reqs[i] = []byte("GET " + p + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	}
	b.Run("null", func(b *testing.B) {
		ln := listen(b)
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusOK)
		})}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		loadHTTP(b, ln.Addr().String(), reqs)
	})
	b.Run("bss", func(b *testing.B) {
		ln := listen(b)
		srv := httpserver.Serve(ln, api.Handler(), slog.New(slog.DiscardHandler), httpserver.NewRegistry())
		done := make(chan error, 1)
		ctx, cancel := context.WithCancel(b.Context())
		go func() { done <- srv.Run(ctx) }()
		defer func() { cancel(); <-done }()
		loadHTTP(b, ln.Addr().String(), reqs)
	})
}

func listen(b *testing.B) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	return ln
}

// loadHTTP sends reqs, cycled, over 64 keep-alive connections to addr.
func loadHTTP(b *testing.B, addr string, reqs [][]byte) {
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(32) // 64 connections on 2 cores, as bss.sh
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Error(err)
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		i := int(next.Add(997))
		for pb.Next() {
			if _, err := c.Write(reqs[i%len(reqs)]); err != nil {
				b.Error(err)
				return
			}
			if err := readAnswer(br); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}

// readAnswer reads one HTTP/1.1 answer with a Content-Length and requires
// a 200.
func readAnswer(br *bufio.Reader) error {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(line, []byte("HTTP/1.1 200 ")) {
		return fmt.Errorf("answer %q", line)
	}
	n := -1
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(line) <= 2 {
			break
		}
		if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
			n, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
		}
	}
	if n < 0 {
		return fmt.Errorf("answer without Content-Length")
	}
	_, err = br.Discard(n)
	return err
}
