package mtls_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/mtls"
	"github.com/hmsuite/hms/internal/mtls/mtlstest"
)

// serve runs the suite's HTTP server on loopback with c's TLS, answering
// every request with the common name of the caller's certificate.
func serve(t *testing.T, c mtls.Config) string {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			io.WriteString(w, r.TLS.PeerCertificates[0].Subject.CommonName)
		}
	})
	srv, err := httpserver.Listen("127.0.0.1:0", h, slog.New(slog.DiscardHandler), httpserver.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	tc, err := c.Server()
	if err != nil {
		t.Fatal(err)
	}
	srv.UseTLS(tc)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	if !strings.HasPrefix(srv.URL(), "https://127.0.0.1:") {
		t.Fatalf("server URL %s, want https on loopback", srv.URL())
	}
	return srv.URL()
}

// get returns the body of GET url, or the error.
func get(t *testing.T, hc *http.Client, url string) (string, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", errors.New(resp.Status)
	}
	return string(b), nil
}

// TestClientCertificates: with a client CA, the handshake refuses a caller
// without a certificate and one whose certificate another CA signed, and
// serves one with a certificate of the CA (the daemon's own client helper).
func TestClientCertificates(t *testing.T) {
	ca, other := mtlstest.NewCA(t), mtlstest.NewCA(t)
	url := serve(t, ca.Config("hsm"))
	tests := []struct {
		name    string
		client  *http.Client
		want    string
		refused bool
	}{
		{name: "no certificate", client: ca.Anonymous(), refused: true},
		{name: "certificate of another CA", client: withRoots(other.Client("mallory"), ca), refused: true},
		{name: "certificate of the CA", client: ca.Client("hbtd"), want: "hbtd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := get(t, tt.client, url)
			if tt.refused {
				if err == nil {
					t.Fatalf("served %q, want the handshake refused", got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("GET = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// withRoots is hc (made by mtls.Config.Client) trusting ca's server
// certificates, so only its own certificate is wrong.
func withRoots(hc *http.Client, ca *mtlstest.CA) *http.Client {
	tr := hc.Transport.(*http.Transport)
	tr.TLSClientConfig.RootCAs = ca.Anonymous().Transport.(*http.Transport).TLSClientConfig.RootCAs
	return hc
}

// TestServerOnly: without a client CA the daemon serves HTTPS to anyone,
// and its clients trust the system's roots, not the test CA.
func TestServerOnly(t *testing.T) {
	ca := mtlstest.NewCA(t)
	cert, key := ca.Issue("sls")
	url := serve(t, mtls.Config{CertFile: cert, KeyFile: key})
	if _, err := get(t, ca.Anonymous(), url); err != nil {
		t.Errorf("without a client CA a caller needs no certificate: %v", err)
	}
	if _, err := get(t, (mtls.Config{CertFile: cert, KeyFile: key}).Client(nil), url); err == nil {
		t.Errorf("a client without -client-ca trusted a certificate of a private CA")
	}
}

// TestReload: a renewed certificate written over the files is served from
// the next connection on, without a restart.
func TestReload(t *testing.T) {
	ca := mtlstest.NewCA(t)
	c := ca.Config("first")
	url := serve(t, c)
	peerName := func() string {
		t.Helper()
		hc := ca.Client("caller")
		resp, err := hc.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.TLS.PeerCertificates[0].Subject.CommonName
	}
	if got := peerName(); got != "first" {
		t.Fatalf("served %q, want first", got)
	}
	ca.IssueTo("second", c.CertFile, c.KeyFile)
	// The modification time decides; make sure it moved.
	later := time.Now().Add(time.Minute)
	for _, f := range []string{c.CertFile, c.KeyFile} {
		if err := os.Chtimes(f, later, later); err != nil {
			t.Fatal(err)
		}
	}
	if got := peerName(); got != "second" {
		t.Errorf("after renewal served %q, want second", got)
	}
	os.WriteFile(c.CertFile, []byte("half-written"), 0o600)
	if got := peerName(); got != "second" {
		t.Errorf("with a broken file served %q, want the last good certificate", got)
	}
}

func TestFlags(t *testing.T) {
	ca := mtlstest.NewCA(t)
	cert, key := ca.Issue("sls")
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want mtls.Config
		err  string
	}{
		{name: "off", want: mtls.Config{}},
		{name: "all three", args: []string{"-tls-cert", cert, "-tls-key", key, "-client-ca", ca.File()},
			want: mtls.Config{CertFile: cert, KeyFile: key, ClientCA: ca.File()}},
		{name: "env twins", env: map[string]string{"HMS_SLS_TLS_CERT": cert, "HMS_SLS_TLS_KEY": key, "HMS_SLS_CLIENT_CA": ca.File()},
			want: mtls.Config{CertFile: cert, KeyFile: key, ClientCA: ca.File()}},
		{name: "cert alone", args: []string{"-tls-cert", cert}, err: "go together"},
		{name: "client CA alone", args: []string{"-client-ca", ca.File()}, err: "-client-ca needs -tls-cert"},
		{name: "key of another certificate", args: []string{"-tls-cert", cert, "-tls-key", ca.File()}, err: "-tls-cert, -tls-key"},
		{name: "missing client CA", args: []string{"-tls-cert", cert, "-tls-key", key, "-client-ca", "/nonexistent"}, err: "-client-ca"},
		{name: "client CA without a certificate", args: []string{"-tls-cert", cert, "-tls-key", key, "-client-ca", key}, err: "no PEM certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := cli.NewFlagSet("sls", func(k string) string { return tt.env[k] }, io.Discard)
			fl := mtls.Register(f)
			if err := f.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			got, err := fl.Config()
			if tt.err != "" {
				if !errors.As(err, new(*cli.UsageError)) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Config = %v, want a usage error about %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Config = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
