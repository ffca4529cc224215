package httpserver

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/problem"
)

func startLimited(t *testing.T, h http.Handler, tune func(*Server)) *Server {
	t.Helper()
	s, err := Listen("127.0.0.1:0", h, slog.New(slog.DiscardHandler), NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	tune(s)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return s
}

// echoJSONMux echoes the JSON posted to /x.
func echoJSONMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /x", func(w http.ResponseWriter, r *http.Request) {
		var v any
		if err := ReadJSON(w, r, 0, &v); err != nil {
			problem.Write(w, r, nil, err)
			return
		}
		WriteJSON(w, 200, v)
	})
	return mux
}

func TestTricklingBodyIsCutWith408(t *testing.T) {
	mux := echoJSONMux()
	s := startLimited(t, mux, func(s *Server) { s.BodyTimeout = 200 * time.Millisecond })
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Headers promise 100 bytes; one arrives and the rest never does.
	if _, err := io.WriteString(c, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || resp.Header.Get("Content-Type") != problem.ContentType {
		t.Fatalf("status %d %s, want 408 problem+json: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

func TestBulkRouteGetsLongDeadlineAndBodyIsRead(t *testing.T) {
	for path, want := range map[string]bool{"/apis/sls/v1/loadstate": true,
		"/hsm/v2/State/Components/BulkEnabled": true, "/hsm/v2/State/Components/x1": false} {
		r, _ := http.NewRequest(http.MethodPatch, path, nil)
		if IsBulkRoute(r) != want {
			t.Errorf("IsBulkRoute(%s) = %v, want %v", path, !want, want)
		}
	}
	mux := echoJSONMux()
	s := startLimited(t, mux, func(*Server) {})
	resp, err := http.Post(s.URL()+"/x", "application/json", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d with the default deadline", resp.StatusCode)
	}
}

func TestConnectionCapAnswers503(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) { WriteJSON(w, 200, "ok") })
	const capConns = 3
	s := startLimited(t, mux, func(s *Server) { s.MaxConns = capConns })
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range capConns {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		// A served request proves the server accepted (and counts) this one.
		if _, err := io.WriteString(c, "GET /x HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("held connection not served: %v", err)
		}
		resp.Body.Close()
	}
	extra, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	resp, err := http.ReadResponse(bufio.NewReader(extra), nil)
	if err != nil {
		t.Fatalf("over-cap connection got no answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"status":503`) {
		t.Fatalf("over-cap connection: %d %s", resp.StatusCode, body)
	}
	// Closing one held connection frees a slot.
	held[0].Close()
	held = held[1:]
	for !servedOnNewConn(t, s.Addr()) {
		// The server notices the close asynchronously; retry until it does.
	}
}

// servedOnNewConn reports whether a fresh connection to addr gets a 200 for GET /x.
func servedOnNewConn(t *testing.T, addr string) bool {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /x HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return false
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}

func TestRaiseFileLimitRaisesSoftToHard(t *testing.T) {
	var before syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &before); err != nil {
		t.Fatal(err)
	}
	if before.Cur == before.Max && before.Max > 64 {
		lowered := syscall.Rlimit{Cur: before.Max / 2, Max: before.Max}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lowered); err != nil {
			t.Fatal(err)
		}
	}
	if err := RaiseFileLimit(slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	var after syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &after); err != nil {
		t.Fatal(err)
	}
	if after.Cur != after.Max {
		t.Fatalf("soft limit %d, hard %d", after.Cur, after.Max)
	}
}
