package tftp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/pin/tftp/v3"
)

// DefaultMaxWindow is the largest windowsize (RFC 7440) granted when a client
// asks for more: 32 blocks of 1,468 bytes are 47 KB in flight, well inside a
// default Linux socket receive buffer (208 KB).
const DefaultMaxWindow = 32

// DefaultMaxWindowBytes caps what one windowed transfer has in flight,
// windowsize x blksize: the window granted shrinks to fit. 32 blocks of
// 1,468 bytes fit; a client asking for 32 blocks of 8,192 (jumbo frames)
// gets 8, and one asking for 32 of 65,464 (loopback) gets pin/tftp's
// lock-step, instead of having the server burst 2 MB at it (or at the
// address it spoofed) per ACK.
const DefaultMaxWindowBytes = 64 << 10

// DefaultRetries is how many times a packet is sent again after a timeout
// before the transfer is given up (pin/tftp's default).
const DefaultRetries = 5

// TFTP opcodes (RFC 1350, RFC 2347) the windowed sender reads and writes.
const (
	opDATA  = 3
	opACK   = 4
	opERROR = 5
	opOACK  = 6
)

// errTimeout is a window (or the OACK) that no ACK answered in time.
var errTimeout = errors.New("timeout")

// rrq is what a client asked for in its read request.
type rrq struct {
	mode     string
	opts     map[string]string // option names lower-cased (RFC 2347)
	maxBlock int               // pin/tftp's blksize cap for the interface the request came in on
}

// requestOf reads the mode, options and block size cap of the request behind
// rf. pin/tftp hands the read handler its own unexported *sender and exports
// none of these, so they are read with reflect (read-only); ok is
// false when the fields are not there (a pin/tftp other than v3.2.0), and the
// request then goes to pin/tftp like any other, windowsize left out of the
// OACK. TestWindowsizeNegotiated fails if that happens.
func requestOf(rf io.ReaderFrom) (r rrq, ok bool) {
	v := reflect.ValueOf(rf)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return rrq{}, false
	}
	mode, opts, maxBlock := v.Elem().FieldByName("mode"), v.Elem().FieldByName("opts"), v.Elem().FieldByName("maxBlockLen")
	if mode.Kind() != reflect.String || maxBlock.Kind() != reflect.Int || opts.Kind() != reflect.Map ||
		opts.Type().Key().Kind() != reflect.String || opts.Type().Elem().Kind() != reflect.String {
		return rrq{}, false
	}
	r = rrq{mode: mode.String(), opts: make(map[string]string, opts.Len()), maxBlock: int(maxBlock.Int())}
	for it := opts.MapRange(); it.Next(); {
		r.opts[strings.ToLower(it.Key().String())] = it.Value().String()
	}
	return r, true
}

// pinConn returns the socket pin/tftp bound for the request behind rf (its
// sender's conn, a *connConnection holding a *net.UDPConn), or nil when the
// fields are not those of v3.2.0. A windowed transfer runs on a socket of
// its own, so it closes pin's at once rather than leave a bound port to the
// garbage collector. reflect reads unexported fields but will not hand them
// out, so the field is reached through its address, once its type is
// checked to be *net.UDPConn; TestWindowClosesPinSocket fails if an upgrade
// of pin/tftp breaks this (the socket would then be left to the collector).
func pinConn(rf io.ReaderFrom) *net.UDPConn {
	v := reflect.ValueOf(rf)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	c := v.Elem().FieldByName("conn")
	if c.Kind() != reflect.Interface || c.IsNil() {
		return nil
	}
	if c = c.Elem(); c.Kind() != reflect.Pointer || c.IsNil() || c.Elem().Kind() != reflect.Struct {
		return nil
	}
	u := c.Elem().FieldByName("conn")
	if !u.IsValid() || u.Type() != reflect.TypeFor[*net.UDPConn]() || !u.CanAddr() {
		return nil
	}
	return *(**net.UDPConn)(unsafe.Pointer(u.UnsafeAddr()))
}

// windowOf is the window a request is served with: its windowsize capped at
// maxWin and at maxBytes in flight (windowsize x blksize), or 0 when pin/tftp
// serves it (no windowsize, one of 1, an invalid one, netascii, or a cap
// below 2 blocks).
func windowOf(r rrq, maxWin, maxBytes int) int {
	v, ok := r.opts["windowsize"]
	if !ok || !strings.EqualFold(r.mode, "octet") {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 2 || n > 65535 {
		return 0
	}
	blksize, _ := blksizeOf(r)
	if n = min(n, maxWin, maxBytes/blksize); n < 2 {
		return 0
	}
	return n
}

// blksizeOf is the block size a request gets, as pin/tftp grants it: its
// blksize when that is 512..65464, capped at the interface's limit; ok is
// false (and the size 512) when the option is absent or out of range.
func blksizeOf(r rrq) (n int, ok bool) {
	n, err := strconv.Atoi(r.opts["blksize"])
	if err != nil || n < 512 || n > 65464 {
		return 512, false
	}
	if r.maxBlock > 0 && n > r.maxBlock {
		n = r.maxBlock
	}
	return n, true
}

// negotiate answers a windowed request's options as pin/tftp answers the
// others: blksize (blksizeOf), tsize with the file's size, and windowsize.
// Other options are left out.
func negotiate(r rrq, size int64, window int) (blksize int, oack []byte) {
	oack = binary.BigEndian.AppendUint16(nil, opOACK)
	add := func(name, value string) {
		oack = append(append(append(append(oack, name...), 0), value...), 0)
	}
	blksize, ok := blksizeOf(r)
	if ok {
		add("blksize", strconv.Itoa(blksize))
	}
	if _, ok := r.opts["tsize"]; ok {
		add("tsize", strconv.FormatInt(size, 10))
	}
	add("windowsize", strconv.Itoa(window))
	return blksize, oack
}

// window is one RFC 7440 transfer. Block 0 is the OACK; block last is the
// final, short (maybe empty) DATA. Block numbers are kept as int64 and sent
// modulo 2^16, so files past 65,535 blocks roll over to 0 as pin/tftp's do.
type window struct {
	conn    *net.UDPConn // connected to the client: the kernel drops other TIDs
	f       io.ReaderAt
	size    int64
	blksize int
	win     int64
	timeout time.Duration
	retries int
	oack    []byte
	last    int64
	buf     []byte // one DATA datagram

	highest   int64 // highest block sent so far
	read      int64 // file bytes sent at least once
	datagrams int   // datagrams sent
	resent    int   // of which sent again
}

func newWindow(conn *net.UDPConn, f io.ReaderAt, size int64, blksize, win int, oack []byte, timeout time.Duration, retries int) *window {
	return &window{conn: conn, f: f, size: size, blksize: blksize, win: int64(win), timeout: timeout,
		retries: retries, oack: oack, last: size/int64(blksize) + 1, buf: make([]byte, 4+blksize)}
}

// run sends windows until the final block is acknowledged. A window is the
// win blocks after the highest acknowledged one; an ACK of any block in it
// starts the next window right after that block (so an ACK of an earlier
// block, the client telling of a loss, resends from there), and a timeout
// resends the same window, retries times at most. ACKs of blocks already
// acknowledged are ignored: answering duplicates is how a sender falls into
// the Sorcerer's Apprentice syndrome (RFC 1123 4.2.3.1); a loss they report
// (the first block of a window lost) is repaired by the timeout.
func (w *window) run() error {
	acked := int64(-1)
	for tries := 0; acked < w.last; {
		from, to := acked+1, min(acked+w.win, w.last)
		if from == 0 {
			to = 0 // the OACK goes alone
		}
		for b := from; b <= to; b++ {
			if err := w.send(b); err != nil {
				return err
			}
		}
		ack, err := w.awaitAck(acked, to)
		if errors.Is(err, errTimeout) {
			if tries++; tries > w.retries {
				w.sendError(0, "timeout")
				return fmt.Errorf("no ack of block %d after %d tries: %w", to, tries, err)
			}
			continue
		}
		if err != nil {
			return err
		}
		acked, tries = ack, 0
	}
	return nil
}

// awaitAck waits for an ACK of a block in (acked, to] and returns its
// number; other datagrams are ignored until the timeout.
func (w *window) awaitAck(acked, to int64) (int64, error) {
	if err := w.conn.SetReadDeadline(time.Now().Add(w.timeout)); err != nil {
		return 0, fmt.Errorf("set deadline: %w", err)
	}
	var in [516]byte
	for {
		n, err := w.conn.Read(in[:])
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return 0, errTimeout
		}
		if err != nil {
			return 0, fmt.Errorf("read: %w", err)
		}
		if n < 4 {
			continue
		}
		switch binary.BigEndian.Uint16(in[:2]) {
		case opERROR:
			msg, _, _ := strings.Cut(string(in[4:n]), "\x00")
			return 0, fmt.Errorf("client error %d: %q", binary.BigEndian.Uint16(in[2:4]), msg)
		case opACK:
			if b := ackedBlock(to, binary.BigEndian.Uint16(in[2:4])); b > acked {
				return b, nil
			}
		}
	}
}

// ackedBlock is the block a 16-bit ACK stands for: the nearest at or below
// to, the last one sent.
func ackedBlock(to int64, ack uint16) int64 {
	return to - int64(uint16(to)-ack)
}

// send sends block b: the OACK for 0, else DATA read from the file.
func (w *window) send(b int64) error {
	pkt, again := w.oack, b <= w.highest && w.datagrams > 0
	if b > 0 {
		off := (b - 1) * int64(w.blksize)
		n := int(min(int64(w.blksize), w.size-off))
		binary.BigEndian.PutUint16(w.buf[0:2], opDATA)
		binary.BigEndian.PutUint16(w.buf[2:4], uint16(b))
		if got, err := w.f.ReadAt(w.buf[4:4+n], off); got < n {
			return fmt.Errorf("read block %d: %w", b, errors.Join(err, io.ErrUnexpectedEOF))
		}
		pkt = w.buf[:4+n]
		if !again {
			w.highest, w.read = b, w.read+int64(n)
		}
	}
	if again {
		w.resent++
	}
	w.datagrams++
	if _, err := w.conn.Write(pkt); err != nil {
		return fmt.Errorf("send block %d: %w", b, err)
	}
	return nil
}

// sendError tells the client the transfer is over; best effort.
func (w *window) sendError(code uint16, msg string) {
	pkt := binary.BigEndian.AppendUint16(nil, opERROR)
	pkt = append(append(binary.BigEndian.AppendUint16(pkt, code), msg...), 0)
	w.conn.Write(pkt)
}

// serveWindowed serves one windowed read from a socket of its own, logged and
// counted as pin/tftp's transfers are. pin/tftp has already bound a socket for
// the request, and offers no way to close it without sending on it (a packet
// from a second TID would confuse the client): it is closed here, unused.
func (s *Server) serveWindowed(rf io.ReaderFrom, name string, f io.ReaderAt, size int64, r rrq, win int) {
	start := time.Now()
	if pc := pinConn(rf); pc != nil {
		pc.Close()
	}
	addr := rf.(tftp.OutgoingTransfer).RemoteAddr()
	var local net.IP
	if pi, ok := rf.(tftp.RequestPacketInfo); ok {
		local = pi.LocalIP()
	}
	log := s.cfg.Log.With("client", addr.IP.String(), "file", name, "windowsize", win)
	s.m.windowed.Inc()
	blksize, oack := negotiate(r, size, win)
	conn, err := net.DialUDP("udp", &net.UDPAddr{IP: local}, &addr)
	if err != nil {
		s.m.transfers.WithLabelValues("failed").Inc()
		log.Info("tftp_transfer_failed", "err", err)
		return
	}
	defer conn.Close()
	w := newWindow(conn, f, size, blksize, win, oack, s.cfg.Timeout, s.cfg.Retries)
	err = w.run()
	s.m.bytes.Add(float64(w.read))
	s.m.resent.Add(float64(w.resent))
	if err != nil {
		s.m.transfers.WithLabelValues("failed").Inc()
		log.Info("tftp_transfer_failed", "err", err, "datagrams", w.datagrams)
		return
	}
	s.m.transfers.WithLabelValues("ok").Inc()
	log.Info("tftp_transfer", "duration", time.Since(start), "blksize", strconv.Itoa(blksize),
		"datagrams", w.datagrams, "resent", w.resent)
}
