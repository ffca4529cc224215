package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// handlerTransport is an http.RoundTripper that serves requests with a handler
// in-process. Inside a synctest bubble there are no sockets, so fake time can
// drive the daemons' timers.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	if r.Body == nil {
		r.Body = http.NoBody
	}
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// clientFor returns an HTTP client whose requests are served by h.
func clientFor(h http.Handler) *http.Client { return &http.Client{Transport: handlerTransport{h}} }

// do sends a JSON request to h and returns the status and body.
func do(t *testing.T, h http.Handler, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// hostTransport serves each request with the handler registered for its host,
// so several daemons can call each other by name inside one synctest bubble.
type hostTransport map[string]http.Handler

func (m hostTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	h, ok := m[r.URL.Host]
	if !ok {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused: no daemon " + r.URL.Host)}
	}
	return handlerTransport{h}.RoundTrip(r)
}
