package tftp

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// wclient is a TFTP client over loopback that speaks windowsize (RFC 7440),
// with faults to inject.
type wclient struct {
	t     *testing.T
	conn  *net.UDPConn
	peer  *net.UDPAddr // the server's port until its first answer, its TID after
	tid   bool
	got   []uint16 // DATA blocks in the order they arrived, lost ones too
	acked int      // highest block acknowledged (sent, not lost)
}

func newWClient(t *testing.T, f *fixture) *wclient {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	must(t, err)
	t.Cleanup(func() { conn.Close() })
	return &wclient{t: t, conn: conn, peer: f.srv.Addr()}
}

// rrq sends a read request; opts are name, value pairs.
func (c *wclient) rrq(name, mode string, opts ...string) {
	pkt := binary.BigEndian.AppendUint16(nil, 1)
	for _, s := range append([]string{name, mode}, opts...) {
		pkt = append(append(pkt, s...), 0)
	}
	c.send(pkt)
}

func (c *wclient) send(pkt []byte) {
	c.t.Helper()
	if _, err := c.conn.WriteToUDP(pkt, c.peer); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

func (c *wclient) ack(b uint16) {
	c.send(binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, opACK), b))
	c.acked = max(c.acked, int(b))
}

// recv returns the next datagram's opcode and the rest of it. The deadline
// only keeps a broken server from hanging the test.
func (c *wclient) recv() (uint16, []byte) {
	c.t.Helper()
	buf := make([]byte, 65536)
	must(c.t, c.conn.SetReadDeadline(time.Now().Add(time.Minute)))
	n, from, err := c.conn.ReadFromUDP(buf)
	if err != nil {
		c.t.Fatalf("recv: %v", err)
	}
	if !c.tid {
		c.peer, c.tid = from, true
	} else if from.Port != c.peer.Port {
		c.t.Fatalf("datagram from port %d, the transfer's is %d", from.Port, c.peer.Port)
	}
	if n < 2 {
		c.t.Fatalf("%d-byte datagram", n)
	}
	return binary.BigEndian.Uint16(buf[:2]), buf[2:n]
}

// oack waits for the server's OACK and returns its options.
func (c *wclient) oack() map[string]string {
	c.t.Helper()
	op, rest := c.recv()
	if op != opOACK {
		c.t.Fatalf("got opcode %d (%q), want an OACK", op, rest)
	}
	opts := map[string]string{}
	f := strings.Split(string(rest), "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		opts[f[i]] = f[i+1]
	}
	return opts
}

// faults are how a client misbehaves; the zero value behaves.
type faults struct {
	loseData map[uint16]bool // DATA blocks lost the first time they arrive
	loseAck  map[uint16]bool // ACKs lost the first time they are sent
	dupAcks  bool            // every ACK sent twice
	stopAt   int             // stop answering after this many blocks (0: never)
}

// receive is an RFC 7440 receiver after the OACK: it ACKs 0, then every win
// blocks received in order and the last one; on a block out of order it ACKs
// the last one in order, once until the next in-order block. It returns the
// file, or what it had when it stopped answering.
func (c *wclient) receive(win, blksize int, fl faults) []byte {
	c.t.Helper()
	var data []byte
	expected, since, reported := uint16(1), 0, false
	ack := func(b uint16) {
		since = 0
		if fl.loseAck[b] {
			delete(fl.loseAck, b)
			return
		}
		c.ack(b)
		if fl.dupAcks {
			c.ack(b)
		}
	}
	ack(0)
	for {
		op, rest := c.recv()
		if op == opOACK && expected == 1 { // sent again: our ACK 0 was lost
			ack(0)
			continue
		}
		if op != opDATA {
			c.t.Fatalf("got opcode %d (%q), want DATA %d", op, rest, expected)
		}
		b := binary.BigEndian.Uint16(rest[:2])
		c.got = append(c.got, b)
		if int(b) > c.acked+win {
			c.t.Errorf("block %d sent with ACK %d the last, window %d", b, c.acked, win)
		}
		if fl.loseData[b] {
			delete(fl.loseData, b)
			continue
		}
		if b != expected {
			if !reported {
				ack(expected - 1)
				reported = true
			}
			continue
		}
		data = append(data, rest[2:]...)
		expected, reported = expected+1, false
		if int(b) == fl.stopAt {
			return data
		}
		last := len(rest)-2 < blksize
		if since++; since == win || last {
			ack(b)
		}
		if last {
			return data
		}
	}
}

func TestWindowsizeNegotiated(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	f := newFixture(t, 0, func(c *Config) {
		c.Timeout = time.Minute // no retransmission but the ones the client asks for
		c.MaxWindow = 16
		c.Log = slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
	})
	even := make([]byte, 512*20) // a whole number of blocks: an empty one ends it
	rand.Read(even)
	must(t, os.WriteFile(filepath.Join(f.root, "even.bin"), even, 0o644))
	for _, tc := range []struct {
		name     string
		file     string
		opts     []string
		want     map[string]string
		win, blk int
		payload  []byte
	}{
		{name: "window 8, blksize and tsize", file: "boot.bin", opts: []string{"blksize", "1468", "tsize", "0", "windowsize", "8"},
			want: map[string]string{"blksize": "1468", "tsize": strconv.Itoa(len(f.payload)), "windowsize": "8"}, win: 8, blk: 1468, payload: f.payload},
		{name: "window 4 alone", file: "boot.bin", opts: []string{"windowsize", "4"},
			want: map[string]string{"windowsize": "4"}, win: 4, blk: 512, payload: f.payload},
		{name: "window capped at MaxWindow", file: "sub/inside.bin", opts: []string{"WindowSize", "1000", "BLKSIZE", "2048"},
			want: map[string]string{"blksize": "2048", "windowsize": "16"}, win: 16, blk: 2048, payload: f.payload},
		{name: "blksize out of range ignored", file: "boot.bin", opts: []string{"blksize", "100", "windowsize", "2"},
			want: map[string]string{"windowsize": "2"}, win: 2, blk: 512, payload: f.payload},
		{name: "empty last block", file: "even.bin", opts: []string{"windowsize", "5", "tsize", "0"},
			want: map[string]string{"tsize": strconv.Itoa(len(even)), "windowsize": "5"}, win: 5, blk: 512, payload: even},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newWClient(t, f)
			c.rrq(tc.file, "octet", tc.opts...)
			if diff := cmp.Diff(tc.want, c.oack()); diff != "" {
				t.Fatalf("OACK (-want +got):\n%s", diff)
			}
			if got := c.receive(tc.win, tc.blk, faults{}); !bytes.Equal(got, tc.payload) {
				t.Fatalf("got %d bytes, want the %d of the file", len(got), len(tc.payload))
			}
		})
	}
	f.stop()
	if n := testutil.ToFloat64(f.srv.m.transfers.WithLabelValues("ok")); n != 5 {
		t.Errorf("ok transfers counted %v, want 5", n)
	}
	if n := testutil.ToFloat64(f.srv.m.windowed); n != 5 {
		t.Errorf("windowed transfers counted %v, want 5", n)
	}
	if n := testutil.ToFloat64(f.srv.m.resent); n != 0 {
		t.Errorf("%v datagrams sent again, want none", n)
	}
	if !strings.Contains(logs.String(), "msg=tftp_transfer client=127.0.0.1 file=boot.bin windowsize=8") {
		t.Errorf("no tftp_transfer log of the window 8 transfer:\n%s", logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// recoverTimeout is the retransmission timeout of the tests where the
// timeout is what recovers: long enough that a loaded machine's late ACK
// does not time out as well (at 50 ms it could, Retries times in a row).
const recoverTimeout = 500 * time.Millisecond

// TestWindowRecovers loses and duplicates datagrams; every transfer ends
// byte-exactly, and the datagrams sent again show which recovery ran.
func TestWindowRecovers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		fl      faults
		resent  func(float64) bool // of the datagrams sent again
		want    string
	}{
		// Block 5 lost: 6 comes out of order, the client ACKs 4 and the
		// server sends 5..12 at once (5..8 again), no timeout involved.
		{name: "ack of an earlier block", timeout: time.Minute, fl: faults{loseData: map[uint16]bool{5: true}},
			resent: func(n float64) bool { return n == 4 }, want: "4"},
		// Duplicated ACKs are ignored: nothing is sent twice.
		{name: "duplicated acks", timeout: time.Minute, fl: faults{dupAcks: true},
			resent: func(n float64) bool { return n == 0 }, want: "0"},
		// The ACK of a window lost: the server times out and resends it.
		{name: "lost ack", timeout: recoverTimeout, fl: faults{loseAck: map[uint16]bool{8: true}},
			resent: func(n float64) bool { return n >= 8 }, want: ">= 8"},
		// The first block of a window lost: the client's ACK repeats the
		// last acknowledged block, which is ignored; the timeout resends.
		{name: "first block of a window lost", timeout: recoverTimeout, fl: faults{loseData: map[uint16]bool{9: true}},
			resent: func(n float64) bool { return n >= 8 }, want: ">= 8"},
		{name: "lost oack ack", timeout: recoverTimeout, fl: faults{loseAck: map[uint16]bool{0: true}},
			resent: func(n float64) bool { return n >= 1 }, want: ">= 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 0, func(c *Config) { c.Timeout = tc.timeout })
			c := newWClient(t, f)
			c.rrq("boot.bin", "octet", "windowsize", "8", "blksize", "1024")
			c.oack()
			if got := c.receive(8, 1024, tc.fl); !bytes.Equal(got, f.payload) {
				t.Fatalf("got %d bytes, want the %d of the file", len(got), len(f.payload))
			}
			f.stop()
			if n := testutil.ToFloat64(f.srv.m.resent); !tc.resent(n) {
				t.Errorf("%v datagrams sent again, want %s (blocks received: %v)", n, tc.want, c.got)
			}
			if n := testutil.ToFloat64(f.srv.m.transfers.WithLabelValues("ok")); n != 1 {
				t.Errorf("ok transfers counted %v, want 1", n)
			}
		})
	}
}

// TestWindowClientGone: a client that stops answering, right after the OACK
// or mid-transfer, gets the window again Retries times, then an ERROR; the
// transfer counts as failed and its slot is freed.
func TestWindowClientGone(t *testing.T) {
	const retries = 2
	for _, tc := range []struct {
		name    string
		stopAt  int // blocks received before it stops; -1: does not ACK the OACK
		timeout time.Duration
		// windows are the distinct runs of DATA blocks; the last one is
		// sent 1+retries times after the client's last ACK. Under load a
		// window may also be sent again before an ACK arrives, so the
		// whole sequence is not compared.
		windows [][]uint16
	}{
		// Nothing but timeouts: no ACK can be late.
		{name: "after the oack", stopAt: -1, timeout: 20 * time.Millisecond},
		{name: "mid-transfer", stopAt: 8, timeout: recoverTimeout, windows: [][]uint16{{1, 2, 3, 4}, {5, 6, 7, 8}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 1, func(c *Config) { c.Timeout, c.Retries = tc.timeout, retries })
			c := newWClient(t, f)
			c.rrq("boot.bin", "octet", "windowsize", "4")
			oacks := 1
			c.oack()
			if tc.stopAt > 0 {
				c.receive(4, 512, faults{stopAt: tc.stopAt})
			}
			for {
				op, rest := c.recv()
				if op == opERROR {
					break
				}
				if op == opOACK {
					oacks++
				} else {
					c.got = append(c.got, binary.BigEndian.Uint16(rest[:2]))
				}
			}
			f.stop() // returns once the transfer has ended
			if tc.stopAt < 0 && oacks != 1+retries {
				t.Errorf("got %d OACKs, want %d (one and %d retries)", oacks, 1+retries, retries)
			}
			runs := windows(c.got, 4)
			var distinct [][]uint16
			for _, w := range runs {
				if !slices.ContainsFunc(distinct, func(d []uint16) bool { return slices.Equal(d, w) }) {
					distinct = append(distinct, w)
				}
			}
			if diff := cmp.Diff(tc.windows, distinct); diff != "" {
				t.Errorf("distinct windows (-want +got):\n%s\nDATA blocks: %v", diff, c.got)
			}
			if last := len(tc.windows) - 1; last >= 0 {
				tail := 0
				for i := len(runs) - 1; i >= 0 && slices.Equal(runs[i], tc.windows[last]); i-- {
					tail++
				}
				if tail != 1+retries {
					t.Errorf("window %v sent %d times at the end, want %d (DATA blocks: %v)", tc.windows[last], tail, 1+retries, c.got)
				}
			}
			if n := testutil.ToFloat64(f.srv.m.transfers.WithLabelValues("failed")); n != 1 {
				t.Errorf("failed transfers counted %v, want 1", n)
			}
			if len(f.srv.active) != 0 {
				t.Errorf("slots still held: %v", f.srv.active)
			}
		})
	}
}

// windows splits DATA block numbers into the windows the server sent: runs
// of consecutive blocks, win at most (the server sends whole windows but
// the last of the file, so one that follows another at once starts after
// win blocks).
func windows(blocks []uint16, win int) [][]uint16 {
	var out [][]uint16
	for i, b := range blocks {
		if i == 0 || b != blocks[i-1]+1 || len(out[len(out)-1]) == win {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], b)
	}
	return out
}

// TestWindowClientError: an ERROR from the client ends the transfer.
func TestWindowClientError(t *testing.T) {
	f := newFixture(t, 0, func(c *Config) { c.Timeout = time.Minute })
	c := newWClient(t, f)
	c.rrq("boot.bin", "octet", "windowsize", "4")
	c.oack()
	c.send(append(binary.BigEndian.AppendUint16([]byte{0, opERROR}, 8), "no window\x00"...))
	f.stop() // would wait a minute per retry were the ERROR not taken
	if n := testutil.ToFloat64(f.srv.m.transfers.WithLabelValues("failed")); n != 1 {
		t.Errorf("failed transfers counted %v, want 1", n)
	}
}

// TestWindowsizeLeftToPin: requests the sender of our own does not take are
// pin/tftp's, whose OACK has no windowsize; refusals are the same with one.
func TestWindowsizeLeftToPin(t *testing.T) {
	for _, tc := range []struct {
		name      string
		maxWindow int
		file      string
		mode      string
		opts      []string
		want      map[string]string
	}{
		{name: "window of 1", file: "boot.bin", mode: "octet", opts: []string{"windowsize", "1", "blksize", "1024"},
			want: map[string]string{"blksize": "1024"}},
		{name: "invalid window", file: "boot.bin", mode: "octet", opts: []string{"windowsize", "x", "blksize", "1024"},
			want: map[string]string{"blksize": "1024"}},
		{name: "netascii", file: "boot.bin", mode: "netascii", opts: []string{"windowsize", "8", "blksize", "1024"},
			want: map[string]string{"blksize": "1024"}},
		{name: "max window 1", maxWindow: 1, file: "boot.bin", mode: "octet", opts: []string{"windowsize", "8", "blksize", "1024"},
			want: map[string]string{"blksize": "1024"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 0, func(c *Config) { c.MaxWindow = tc.maxWindow })
			c := newWClient(t, f)
			c.rrq(tc.file, tc.mode, tc.opts...)
			if diff := cmp.Diff(tc.want, c.oack()); diff != "" {
				t.Fatalf("OACK (-want +got):\n%s", diff)
			}
			c.send(append(binary.BigEndian.AppendUint16([]byte{0, opERROR}, 0), "enough\x00"...))
		})
	}
	f := newFixture(t, 0)
	for _, file := range []string{"../secret", "escape.bin", "nope.efi"} {
		c := newWClient(t, f)
		c.rrq(file, "octet", "windowsize", "8")
		if op, rest := c.recv(); op != opERROR {
			t.Errorf("%s: opcode %d (%q), want an ERROR", file, op, rest)
		}
	}
}

func TestAckedBlock(t *testing.T) {
	for _, tc := range []struct {
		to   int64
		ack  uint16
		want int64
	}{
		{to: 12, ack: 12, want: 12},
		{to: 12, ack: 4, want: 4},
		{to: 0, ack: 0, want: 0},
		{to: 0, ack: 5, want: -65531},
		{to: 65537, ack: 1, want: 65537},
		{to: 65537, ack: 65535, want: 65535},
		{to: 65537, ack: 0, want: 65536},
	} {
		if got := ackedBlock(tc.to, tc.ack); got != tc.want {
			t.Errorf("ackedBlock(%d, %d) = %d, want %d", tc.to, tc.ack, got, tc.want)
		}
	}
}
