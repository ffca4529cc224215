package tftp

import (
	"bytes"
	"encoding/binary"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWindowBytesCap: the window granted shrinks so that windowsize x
// blksize stays within MaxWindowBytes, and below two blocks the request is
// pin/tftp's (no windowsize in the OACK). receive fails the test if the
// server ever sends past the window it granted.
func TestWindowBytesCap(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxBytes int // 0: DefaultMaxWindowBytes
		opts     []string
		want     map[string]string
		win, blk int // 0: left to pin/tftp
	}{
		{name: "jumbo blocks under the default", opts: []string{"blksize", "8192", "windowsize", "32"},
			want: map[string]string{"blksize": "8192", "windowsize": "8"}, win: 8, blk: 8192},
		{name: "within the default", opts: []string{"blksize", "1468", "windowsize", "32"},
			want: map[string]string{"blksize": "1468", "windowsize": "32"}, win: 32, blk: 1468},
		{name: "smaller cap", maxBytes: 4096, opts: []string{"blksize", "1024", "windowsize", "8"},
			want: map[string]string{"blksize": "1024", "windowsize": "4"}, win: 4, blk: 1024},
		{name: "default block size", maxBytes: 2048, opts: []string{"windowsize", "16"},
			want: map[string]string{"windowsize": "4"}, win: 4, blk: 512},
		{name: "two blocks do not fit", opts: []string{"blksize", "40000", "windowsize", "8"},
			want: map[string]string{"blksize": "40000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 0, func(c *Config) { c.MaxWindowBytes = tc.maxBytes })
			c := newWClient(t, f)
			c.rrq("boot.bin", "octet", tc.opts...)
			if diff := cmp.Diff(tc.want, c.oack()); diff != "" {
				t.Fatalf("OACK (-want +got):\n%s", diff)
			}
			if tc.win == 0 {
				c.send(append(binary.BigEndian.AppendUint16([]byte{0, opERROR}, 0), "enough\x00"...))
				return
			}
			if got := c.receive(tc.win, tc.blk, faults{}); !bytes.Equal(got, f.payload) {
				t.Fatalf("got %d bytes, want the %d of the file", len(got), len(f.payload))
			}
		})
	}
}

// TestWindowClosesPinSocket: the socket pin/tftp binds for a request the
// windowed sender takes over is closed with the transfer, not left to the
// garbage collector (turned off here, so a socket left to it stays open).
// While it serves, the server holds its listening socket and at most one
// sender's; once it stops, none.
func TestWindowClosesPinSocket(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	before := udpSockets(t)
	f := newFixture(t, 0, func(c *Config) { c.MaxWindow = 8 })
	clients := map[string]bool{}
	for range 3 {
		c := newWClient(t, f)
		clients[c.conn.LocalAddr().String()] = true
		c.rrq("boot.bin", "octet", "windowsize", "8", "blksize", "1024")
		c.oack()
		if got := c.receive(8, 1024, faults{}); !bytes.Equal(got, f.payload) {
			t.Fatalf("got %d bytes, want the %d of the file", len(got), len(f.payload))
		}
		if held := serverSockets(t, before, clients); len(held) > 2 {
			t.Errorf("after a transfer the server holds UDP sockets %v, want its listening one and at most the sender's", held)
		}
	}
	f.stop() // returns once every handler has returned
	if held := serverSockets(t, before, clients); len(held) != 0 {
		t.Errorf("UDP sockets left open after the server stopped: %v", held)
	}
}

// serverSockets are the local addresses of the UDP sockets the process
// holds that it did not hold before and that are not the clients'.
func serverSockets(t *testing.T, before map[string]string, clients map[string]bool) []string {
	t.Helper()
	var out []string
	for inode, local := range udpSockets(t) {
		if _, old := before[inode]; !old && !clients[local] {
			out = append(out, local)
		}
	}
	return out
}

// udpSockets returns the UDP sockets of this process, inode -> local
// address (IP:port), from /proc (Linux; the test skips elsewhere).
func udpSockets(t *testing.T) map[string]string {
	t.Helper()
	local := map[string]string{}
	for _, table := range []string{"/proc/net/udp", "/proc/net/udp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			t.Skipf("no %s: %v", table, err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if i == 0 || len(f) < 10 {
				continue
			}
			local[f[9]] = procAddr(f[1])
		}
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	out := map[string]string{}
	for _, fd := range fds {
		target, err := os.Readlink("/proc/self/fd/" + fd.Name())
		inode, ok := strings.CutPrefix(target, "socket:[")
		if err != nil || !ok {
			continue
		}
		inode = strings.TrimSuffix(inode, "]")
		if addr, ok := local[inode]; ok {
			out[inode] = addr
		}
	}
	return out
}

// procAddr turns /proc/net/udp's "0100007F:1F90" into "127.0.0.1:8080"
// (IPv4; IPv6 addresses are left in hex, only told apart).
func procAddr(s string) string {
	hexIP, hexPort, _ := strings.Cut(s, ":")
	port, _ := strconv.ParseUint(hexPort, 16, 16)
	ip, err := strconv.ParseUint(hexIP, 16, 32)
	if len(hexIP) != 8 || err != nil {
		return hexIP + ":" + strconv.FormatUint(port, 10)
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(ip))
	return strconv.Itoa(int(b[0])) + "." + strconv.Itoa(int(b[1])) + "." + strconv.Itoa(int(b[2])) + "." +
		strconv.Itoa(int(b[3])) + ":" + strconv.FormatUint(port, 10)
}
