package main

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/mtls/mtlstest"
)

// TestClientCertificate: an hbtd run with -client-ca takes the agent's
// heartbeats when the agent presents a certificate of the CA (-tls-cert,
// -tls-key, -ca-file or their env twins), and refuses it in the TLS
// handshake without one.
func TestClientCertificate(t *testing.T) {
	ca := mtlstest.NewCA(t)
	cert, key := ca.Issue("x3000c0s1b0n0")
	for _, tt := range []struct {
		name string
		args []string
		env  map[string]string
		ok   bool
	}{
		{name: "flags", args: []string{"-tls-cert", cert, "-tls-key", key, "-ca-file", ca.File()}, ok: true},
		{name: "env", env: map[string]string{"HMS_HBAGENT_TLS_CERT": cert, "HMS_HBAGENT_TLS_KEY": key, "HMS_HBAGENT_CA_FILE": ca.File()}, ok: true},
		{name: "no certificate", args: []string{"-ca-file", ca.File()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			beats, refused := make(chan string, 1), make(chan struct{}, 1)
			srv := tlsHBTD(t, ca, beats, refused)
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			args := append([]string{"-hbtd-url", srv.URL, "-xname", "x3000c0s1b0n0", "-token-cmdline", "/nonexistent"}, tt.args...)
			go func() { done <- run(ctx, args, func(k string) string { return tt.env[k] }, io.Discard) }()
			select {
			case path := <-beats:
				if !tt.ok {
					t.Errorf("hbtd took a heartbeat (%s) from an agent without a certificate", path)
				}
			case <-refused:
				if tt.ok {
					t.Error("hbtd refused the agent's certificate")
				}
			case err := <-done:
				t.Fatalf("agent stopped: %v", err)
			}
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
}

// tlsHBTD is an hbtd stand-in requiring client certificates of ca: it
// sends each heartbeat's path to beats, and a note to refused for each
// failed handshake.
func tlsHBTD(t *testing.T, ca *mtlstest.CA, beats chan<- string, refused chan<- struct{}) *httptest.Server {
	t.Helper()
	tc, err := ca.Config("hbtd").Server()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case beats <- r.URL.Path:
		default:
		}
		w.WriteHeader(http.StatusOK)
	}))
	srv.TLS = tc
	srv.Config.ErrorLog = log.New(writerFunc(func(p []byte) (int, error) {
		if strings.Contains(string(p), "TLS handshake error") {
			select {
			case refused <- struct{}{}:
			default:
			}
		}
		return len(p), nil
	}), "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
