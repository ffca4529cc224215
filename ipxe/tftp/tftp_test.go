package tftp

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pin/tftp/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// fixture is a root holding boot.bin (random bytes), a symlink inside the
// root to it, a symlink leaving the root, and a secret file beside the root.
type fixture struct {
	root, outside string
	payload       []byte
	srv           *Server
	reg           *prometheus.Registry
	stop          func() // stops the server and waits for its transfers
}

// newFixture starts a server on the fixture's root; with sets more of its
// configuration.
func newFixture(t *testing.T, perClient int, with ...func(*Config)) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{root: filepath.Join(dir, "root"), outside: filepath.Join(dir, "secret"), payload: make([]byte, 200_000+123)}
	rand.Read(f.payload)
	must(t, os.MkdirAll(filepath.Join(f.root, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(f.root, "boot.bin"), f.payload, 0o644))
	must(t, os.WriteFile(f.outside, []byte("secret"), 0o644))
	must(t, os.Symlink("../boot.bin", filepath.Join(f.root, "sub", "inside.bin")))
	must(t, os.Symlink(f.outside, filepath.Join(f.root, "escape.bin")))
	must(t, os.Symlink("../secret", filepath.Join(f.root, "escape-rel.bin")))
	f.reg = prometheus.NewRegistry()
	cfg := Config{Listen: "127.0.0.1:0", Root: f.root, PerClient: perClient, Timeout: 2 * time.Second, Registerer: f.reg}
	for _, w := range with {
		w(&cfg)
	}
	srv, err := Listen(cfg)
	must(t, err)
	f.srv = srv
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	var once sync.Once
	f.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("run: %v", err)
			}
		})
	}
	t.Cleanup(f.stop)
	return f
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fetch reads name with pin/tftp's client; blksize 0 leaves the default.
func (f *fixture) fetch(t *testing.T, name string, blksize int) ([]byte, int64, error) {
	t.Helper()
	c, err := tftp.NewClient(f.srv.Addr().String())
	must(t, err)
	c.SetTimeout(2 * time.Second)
	c.RequestTSize(true)
	if blksize > 0 {
		c.SetBlockSize(blksize)
	}
	wt, err := c.Receive(name, "octet")
	if err != nil {
		return nil, 0, err
	}
	size, _ := wt.(tftp.IncomingTransfer).Size()
	var buf bytes.Buffer
	_, err = wt.WriteTo(&buf)
	return buf.Bytes(), size, err
}

func TestServesFilesByteExactly(t *testing.T) {
	f := newFixture(t, 0)
	for _, tc := range []struct {
		name    string
		file    string
		blksize int
	}{
		{name: "default block size", file: "boot.bin"},
		{name: "negotiated block size", file: "boot.bin", blksize: 1468},
		{name: "symlink inside the root", file: "sub/inside.bin", blksize: 8192},
		{name: "backslash separators", file: `sub\inside.bin`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, size, err := f.fetch(t, tc.file, tc.blksize)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, f.payload) {
				t.Fatalf("got %d bytes, want the %d of the file", len(got), len(f.payload))
			}
			if size != int64(len(f.payload)) {
				t.Errorf("tsize %d, want %d", size, len(f.payload))
			}
		})
	}
	f.stop() // the last transfer's hook runs after the client's final ACK
	if n := testutil.ToFloat64(f.srv.m.transfers.WithLabelValues("ok")); n != 4 {
		t.Errorf("ok transfers counted %v, want 4", n)
	}
}

func TestRefusesWithoutLeakingPaths(t *testing.T) {
	f := newFixture(t, 0)
	for _, tc := range []struct {
		name, file, want string
	}{
		{name: "traversal", file: "../secret", want: ErrDenied.Error()},
		{name: "deep traversal", file: "../../etc/passwd", want: ErrDenied.Error()},
		{name: "traversal inside a name", file: "sub/../../secret", want: ErrDenied.Error()},
		{name: "absolute path", file: f.outside, want: ErrDenied.Error()},
		{name: "absolute path into the root", file: "/boot.bin", want: ErrDenied.Error()},
		{name: "symlink leaving the root", file: "escape.bin", want: ErrDenied.Error()},
		{name: "relative symlink leaving the root", file: "escape-rel.bin", want: ErrDenied.Error()},
		{name: "missing file", file: "nope.efi", want: ErrNotFound.Error()},
		{name: "directory", file: "sub", want: ErrNotFound.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := f.fetch(t, tc.file, 0)
			if err == nil {
				t.Fatalf("served %d bytes", len(got))
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), f.root) || strings.Contains(err.Error(), "secret\"") {
				t.Errorf("error %q leaks a server path", err)
			}
		})
	}
}

func TestRefusesWrites(t *testing.T) {
	f := newFixture(t, 0)
	c, err := tftp.NewClient(f.srv.Addr().String())
	must(t, err)
	c.SetTimeout(2 * time.Second)
	rf, err := c.Send("new.bin", "octet")
	if err == nil {
		_, err = rf.ReadFrom(bytes.NewReader([]byte("data")))
	}
	if err == nil {
		t.Fatal("write accepted")
	}
	if _, err := os.Stat(filepath.Join(f.root, "new.bin")); err == nil {
		t.Fatal("file written")
	}
}

func TestPerClientLimit(t *testing.T) {
	s := &Server{cfg: Config{PerClient: 2}, active: map[string]int{}}
	if !s.acquire("10.0.0.1") || !s.acquire("10.0.0.1") {
		t.Fatal("refused within the limit")
	}
	if s.acquire("10.0.0.1") {
		t.Fatal("third concurrent transfer allowed")
	}
	if !s.acquire("10.0.0.2") {
		t.Fatal("another client refused")
	}
	s.release("10.0.0.1")
	if !s.acquire("10.0.0.1") {
		t.Fatal("refused after a release")
	}
	s.release("10.0.0.1")
	s.release("10.0.0.1")
	s.release("10.0.0.2")
	if len(s.active) != 0 {
		t.Fatalf("active not emptied: %v", s.active)
	}
}

func TestPerClientLimitOverTheWire(t *testing.T) {
	f := newFixture(t, 1)
	// Hold one transfer open: request, then never ACK the first block.
	c, err := tftp.NewClient(f.srv.Addr().String())
	must(t, err)
	c.SetTimeout(2 * time.Second)
	c.SetRetries(1)
	wt, err := c.Receive("boot.bin", "octet") // the first DATA has arrived, unacknowledged
	must(t, err)
	_, _, err = f.fetch(t, "boot.bin", 0)
	if err == nil || !strings.Contains(err.Error(), ErrBusy.Error()) {
		t.Fatalf("second concurrent transfer: %v, want %q", err, ErrBusy)
	}
	if _, err := wt.WriteTo(io.Discard); err != nil {
		t.Fatalf("first transfer: %v", err)
	}
}

func TestHas(t *testing.T) {
	f := newFixture(t, 0)
	for name, want := range map[string]bool{"boot.bin": true, "sub/inside.bin": true, "escape.bin": false, "sub": false, "nope": false} {
		if got := f.srv.Has(name); got != want {
			t.Errorf("Has(%q) = %v, want %v", name, got, want)
		}
	}
}
