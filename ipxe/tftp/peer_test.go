package tftp

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/testpeer"
)

// ipxeRoot serves Debian's ipxe package's own directory (the default root),
// as a deployment does; the package is a test peer.
func ipxeRoot(t *testing.T) (*Server, []byte) {
	t.Helper()
	testpeer.Require(t, "atftp") // make peers installs ipxe with it
	want, err := os.ReadFile(filepath.Join(DefaultRoot, "undionly.kpxe"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Debian package ipxe missing under CI=true: %v", err)
		}
		t.Skipf("Debian package ipxe not installed: %v", err)
	}
	srv, err := Listen(Config{Listen: "127.0.0.1:0", Timeout: 2 * time.Second})
	must(t, err)
	done := make(chan error, 1)
	ctx := t.Context()
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() { <-done })
	return srv, want
}

func runPeer(t *testing.T, name string, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), testpeer.Require(t, name), args...)
	cmd.WaitDelay = 5 * time.Second
	return cmd.CombinedOutput()
}

func TestPeersFetchUndionlyByteExactly(t *testing.T) {
	srv, want := ipxeRoot(t)
	host, port := "127.0.0.1", strconv.Itoa(srv.Addr().Port)
	for _, tc := range []struct {
		name  string
		peer  string
		args  func(out string) []string
		check func(t *testing.T, output []byte) // of the peer's output; nil: none
	}{
		{name: "atftp", peer: "atftp", args: func(out string) []string {
			return []string{"-g", "-r", "undionly.kpxe", "-l", out, host, port}
		}},
		{name: "atftp blksize and tsize", peer: "atftp", args: func(out string) []string {
			return []string{"--option", "blksize 1428", "--option", "tsize 0", "-g", "-r", "undionly.kpxe", "-l", out, host, port}
		}},
		// RFC 7440: windowsize granted, atftp ACKs every 8th block.
		{name: "atftp windowsize", peer: "atftp", args: func(out string) []string {
			return []string{"--trace", "--option", "windowsize 8", "--option", "blksize 1428", "-g", "-r", "undionly.kpxe", "-l", out, host, port}
		}, check: func(t *testing.T, b []byte) {
			oack := regexp.MustCompile(`received OACK <[^>]*windowsize: 8,`)
			data, acks := bytes.Count(b, []byte("DATA <block")), bytes.Count(b, []byte("sent ACK"))
			if !oack.Match(b) || acks > data/8+2 {
				t.Errorf("windowsize 8 not used: %d DATA, %d ACKs:\n%.2000s", data, acks, b)
			}
		}},
		{name: "curl", peer: "curl", args: func(out string) []string {
			return []string{"-sS", "--tftp-blksize", "1024", "-o", out, "tftp://" + host + ":" + port + "/undionly.kpxe"}
		}},
		{name: "tftp-hpa", peer: "tftp", args: func(out string) []string {
			// tftp-hpa exits 0 on a server error: the comparison below decides.
			return []string{host, port, "-m", "binary", "-c", "get", "undionly.kpxe", out}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "undionly.kpxe")
			b, err := runPeer(t, tc.peer, tc.args(out)...)
			if err != nil {
				t.Fatalf("%s: %v\n%s", tc.peer, err, b)
			}
			if tc.check != nil {
				tc.check(t, b)
			}
			got, err := os.ReadFile(out)
			must(t, err)
			if !bytes.Equal(got, want) {
				t.Fatalf("%s fetched %d bytes, want the %d of undionly.kpxe", tc.peer, len(got), len(want))
			}
		})
	}
}

func TestAtftpTraversalRefused(t *testing.T) {
	srv, _ := ipxeRoot(t)
	for _, name := range []string{"../../etc/passwd", "/etc/passwd", "qemu/../../../etc/passwd"} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "passwd")
			b, err := runPeer(t, "atftp", "-g", "-r", name, "-l", out, "127.0.0.1", strconv.Itoa(srv.Addr().Port))
			if err == nil {
				t.Fatalf("atftp succeeded:\n%s", b)
			}
			if !bytes.Contains(b, []byte(ErrDenied.Error())) {
				t.Errorf("atftp output lacks %q:\n%s", ErrDenied, b)
			}
			if got, _ := os.ReadFile(out); bytes.Contains(got, []byte("root:")) {
				t.Fatal("/etc/passwd served")
			}
		})
	}
}
