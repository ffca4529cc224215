package fanout

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// pipeServer answers h1Client over in-memory connections: every dial is a
// net.Pipe whose far end runs serve, so tests can script raw responses and
// run inside a synctest bubble.
type pipeServer struct {
	serve func(c net.Conn, br *bufio.Reader)
	dials atomic.Int64
	wg    sync.WaitGroup
}

func (ps *pipeServer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	ps.dials.Add(1)
	client, server := net.Pipe()
	ps.wg.Go(func() {
		defer server.Close()
		ps.serve(server, bufio.NewReader(server))
	})
	return client, nil
}

// scripted answers each request on a connection with the next of resps
// written as is; after the last one it closes the connection.
func scripted(t *testing.T, resps ...string) func(net.Conn, *bufio.Reader) {
	return func(c net.Conn, br *bufio.Reader) {
		for _, resp := range resps {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			if _, err := io.Copy(io.Discard, req.Body); err != nil {
				t.Errorf("read request body: %v", err)
				return
			}
			if _, err := io.WriteString(c, resp); err != nil {
				return
			}
		}
	}
}

func testH1Client(ps *pipeServer) *h1Client {
	c := newH1Client(5*time.Second, 4)
	c.dial = ps.dial
	return c
}

func mustTarget(t *testing.T, raw string) *h1Target {
	t.Helper()
	tg, ok := newH1Target(raw)
	if !ok {
		t.Fatalf("newH1Target(%q) refused", raw)
	}
	return &tg
}

func TestH1ClientSendsWellFormedRequests(t *testing.T) {
	type got struct {
		Method, URI, Host, ContentType, Body string
		Length                               int64
	}
	var mu sync.Mutex
	var reqs []got
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		reqs = append(reqs, got{Method: r.Method, URI: r.RequestURI, Host: r.Host, ContentType: r.Header.Get("Content-Type"),
			Body: string(b), Length: r.ContentLength})
		mu.Unlock()
		w.Write([]byte(`{"ok":true}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := newH1Client(5*time.Second, 4)
	defer c.close()
	tg := mustTarget(t, srv.URL+"/scn/a%20b?x=1")
	for _, body := range []string{`{"Seq":1}`, `{"Seq":2}`, ``} {
		if err := c.post(t.Context(), tg, []byte(body)); err != nil {
			t.Fatalf("post %q: %v", body, err)
		}
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	var want []got
	for _, body := range []string{`{"Seq":1}`, `{"Seq":2}`, ``} {
		want = append(want, got{Method: "POST", URI: "/scn/a%20b?x=1", Host: host, ContentType: "application/json",
			Body: body, Length: int64(len(body))})
	}
	if diff := cmp.Diff(want, reqs); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("used %d connections for 3 sequential posts, want 1 kept alive", n)
	}
}

func TestH1ClientResponses(t *testing.T) {
	tests := []struct {
		name    string
		resp    string
		wantErr string // substring; "" for success
		dials   int64  // for two posts
		closes  bool   // the server closes the connection after answering
	}{
		{name: "content length", resp: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", dials: 1},
		{name: "no content", resp: "HTTP/1.1 204 No Content\r\n\r\n", dials: 1},
		{name: "chunked with trailer", resp: "HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"5;ext=1\r\nhello\r\n0\r\nX-Trailer: y\r\n\r\n", dials: 1},
		{name: "informational first", resp: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", dials: 1},
		{name: "lowercase headers, bare LF", resp: "HTTP/1.1 200 OK\ncontent-length: 2\n\nok", dials: 1},
		{name: "connection close", resp: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", dials: 2, closes: true},
		{name: "HTTP/1.0 without keep-alive", resp: "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", dials: 2, closes: true},
		{name: "HTTP/1.0 keep-alive", resp: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", dials: 1},
		{name: "HTTP/1.0 keep-alive after long headers", resp: "HTTP/1.0 200 OK\r\n" +
			strings.Repeat("X-Filler: "+strings.Repeat("f", 1000)+"\r\n", 6) +
			"Connection: keep-alive\r\nContent-Length: 0\r\n\r\n", dials: 1},
		{name: "body to end of connection", resp: "HTTP/1.1 200 OK\r\n\r\nall of it", dials: 2, closes: true},
		{name: "server error", resp: "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops",
			wantErr: "subscriber answered 500 Internal Server Error", dials: 1},
		{name: "redirect is a failure", resp: "HTTP/1.1 307 Temporary Redirect\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n",
			wantErr: "subscriber answered 307", dials: 1},
		{name: "not HTTP", resp: "SSH-2.0-OpenSSH_9.2\r\n\r\n", wantErr: "malformed status line", dials: 2},
		{name: "bad content length", resp: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", wantErr: "malformed Content-Length", dials: 2},
		{name: "unknown transfer encoding", resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", wantErr: "unsupported Transfer-Encoding", dials: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ps := &pipeServer{serve: scripted(t, tc.resp, tc.resp)}
				if tc.closes {
					ps.serve = scripted(t, tc.resp)
				}
				c := testH1Client(ps)
				tg := mustTarget(t, "http://sub.example:8080/scn")
				for i := range 2 {
					err := c.post(t.Context(), tg, []byte(`{}`))
					switch {
					case tc.wantErr == "" && err != nil:
						t.Fatalf("post %d: %v", i, err)
					case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
						t.Fatalf("post %d: error %v, want one containing %q", i, err, tc.wantErr)
					}
				}
				if n := ps.dials.Load(); n != tc.dials {
					t.Errorf("dialled %d times for two posts, want %d", n, tc.dials)
				}
				c.close()
				ps.wg.Wait()
			})
		})
	}
}

// TestH1ClientClosesStaleIdleConnections: a connection to a subscriber no
// longer posted to is closed once it has been idle past h1IdleTimeout, when
// any later delivery returns its connection.
func TestH1ClientClosesStaleIdleConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ok := "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
		ps := &pipeServer{serve: scripted(t, ok, ok, ok)}
		c := testH1Client(ps)
		defer c.close()
		gone, other := mustTarget(t, "http://gone.example/scn"), mustTarget(t, "http://other.example/scn")
		for _, tg := range []*h1Target{gone, other} {
			if err := c.post(t.Context(), tg, []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(h1IdleTimeout + time.Second)
		if err := c.post(t.Context(), other, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		_, kept := c.idle[gone.addr]
		n := c.nidle
		c.mu.Unlock()
		if kept || n != 1 {
			t.Errorf("after the sweep: idle connection to %s kept %v, %d idle in all; want it closed, 1 left", gone.addr, kept, n)
		}
	})
}

func TestH1ClientResendsOnConnectionClosedWhileIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Each connection answers once and is then closed by the server
		// without saying so, as servers do with idle keep-alive connections.
		ps := &pipeServer{serve: scripted(t, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")}
		c := testH1Client(ps)
		defer c.close()
		tg := mustTarget(t, "http://sub/scn")
		for i := range 3 {
			if err := c.post(t.Context(), tg, []byte(`{}`)); err != nil {
				t.Fatalf("post %d: %v", i, err)
			}
		}
		if n := ps.dials.Load(); n != 3 {
			t.Errorf("dialled %d times, want 3 (one per post)", n)
		}
	})
}

// TestH1ClientTimesOutAndDoesNotResendAfterTimeout: a request to a hanging
// subscriber gives up at its deadline, once (a resend would take longer).
// A connection's deadline moves only once more than a quarter of the
// timeout has passed since it was set, so a request on a reused connection
// gets between 3/4 of the timeout and all of it.
func TestH1ClientTimesOutAndDoesNotResendAfterTimeout(t *testing.T) {
	const timeout = 5 * time.Second // testH1Client's
	for _, tc := range []struct {
		idle, want time.Duration
	}{
		{idle: 0, want: timeout},
		{idle: timeout / 8, want: timeout - timeout/8},
		{idle: timeout / 4, want: timeout * 3 / 4}, // not moved yet: the least a request gets
		{idle: timeout / 2, want: timeout},
	} {
		t.Run(tc.idle.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var first atomic.Bool
				first.Store(true)
				ps := &pipeServer{serve: func(c net.Conn, br *bufio.Reader) {
					if first.Swap(false) { // the first connection answers once, then hangs
						scripted(t, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")(c, br)
					}
					_, _ = io.Copy(io.Discard, c)
				}}
				c := testH1Client(ps)
				defer c.close()
				tg := mustTarget(t, "http://sub/scn")
				if err := c.post(t.Context(), tg, []byte(`{}`)); err != nil {
					t.Fatal(err)
				}
				time.Sleep(tc.idle)
				start := time.Now()
				if err := c.post(t.Context(), tg, []byte(`{}`)); err == nil || !isTimeout(err) {
					t.Fatalf("post to a hanging subscriber: %v, want a timeout", err)
				}
				if d := time.Since(start); d != tc.want {
					t.Errorf("gave up after %v, want %v", d, tc.want)
				}
			})
		})
	}
}

func TestH1ClientCloseEndsRequestsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ps := &pipeServer{serve: func(c net.Conn, br *bufio.Reader) { _, _ = io.Copy(io.Discard, c) }}
		c := testH1Client(ps)
		tg := mustTarget(t, "http://sub/scn")
		done := make(chan error, 1)
		go func() { done <- c.post(t.Context(), tg, []byte(`{}`)) }()
		synctest.Wait()
		c.close()
		synctest.Wait()
		select {
		case err := <-done:
			if err == nil {
				t.Error("post succeeded after close")
			}
		default:
			t.Fatal("post still running after close")
		}
		if err := c.post(t.Context(), tg, []byte(`{}`)); err == nil {
			t.Error("post after close succeeded")
		}
	})
}

func TestNewH1Target(t *testing.T) {
	tests := []struct {
		url      string
		ok       bool
		addr     string
		wantHead string
	}{
		{url: "http://node1:8080/scn?x=1", ok: true, addr: "node1:8080", wantHead: "POST /scn?x=1 HTTP/1.1\r\nHost: node1:8080\r\n"},
		{url: "http://node1", ok: true, addr: "node1:80", wantHead: "POST / HTTP/1.1\r\nHost: node1\r\n"},
		{url: "http://[fe80::1]:9000/a", ok: true, addr: "[fe80::1]:9000", wantHead: "POST /a HTTP/1.1\r\nHost: [fe80::1]:9000\r\n"},
		{url: "https://node1/scn"},
		{url: "http://user:pw@node1/scn"},
	}
	for _, tc := range tests {
		tg, ok := newH1Target(tc.url)
		if ok != tc.ok {
			t.Errorf("newH1Target(%q) ok = %v, want %v", tc.url, ok, tc.ok)
			continue
		}
		if ok && (tg.addr != tc.addr || !strings.HasPrefix(string(tg.head), tc.wantHead)) {
			t.Errorf("newH1Target(%q) = %q, %q; want %q, head starting %q", tc.url, tg.addr, tg.head, tc.addr, tc.wantHead)
		}
	}
}
