// Package tftp is the boot chain's TFTP server: it serves the iPXE binaries
// (undionly.kpxe, ipxe.efi, ...) that PXE firmware fetches after DHCP,
// read-only, from one directory. It is built on github.com/pin/tftp/v3.
//
// Names are resolved with os.Root, so a symlink is followed only while it
// stays inside the root; "..", absolute paths and writes are refused with a
// TFTP error that names no server path. tsize and blksize are negotiated (the
// block size is clamped to the interface MTU), and so is windowsize (RFC 7440).
//
// pin/tftp v3.2.0 cannot negotiate windowsize: its sender.sendOptions deletes
// every requested option but blksize and tsize before it writes the OACK, and
// its Server.SetAnticipate is not RFC 7440 (a window sent to every client
// unasked, an ACK awaited for each block of it, the whole window resent on a
// loss). So a read request asking for a window of two blocks or more is served
// by a sender of our own (window.go), from our read handler, after the same
// checks, under the same per-client limit, logged and counted the same way;
// every other request, iPXE's among them (iPXE never asks for a window), is
// pin/tftp's, untouched. -tftp-max-window 1 sends them all to pin/tftp, and
// -tftp-max-window-bytes caps windowsize x blksize, what one client has in
// flight. pin/tftp binds a socket for every request before its handler
// runs; for a windowed one it stays unused and is closed at once.
package tftp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/pin/tftp/v3"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// DefaultRoot is where Debian's ipxe package installs the iPXE binaries.
const DefaultRoot = "/usr/lib/ipxe"

// DefaultPerClient is how many transfers one client address may run at once.
const DefaultPerClient = 8

// Errors the server answers with; their texts go to the client, so they
// name no server path.
var (
	ErrNotFound = errors.New("file not found")
	ErrDenied   = errors.New("access violation")
	ErrBusy     = errors.New("too many transfers from this address")
)

// Config configures a Server.
type Config struct {
	// Listen is the UDP address to bind (":69"; "127.0.0.1:0" in tests).
	Listen string
	// Root is the directory served (DefaultRoot when empty).
	Root string
	// PerClient bounds concurrent transfers per client IP (DefaultPerClient).
	PerClient int
	// Timeout is the wait for one ACK before a retransmission (5 s).
	Timeout time.Duration
	// Retries is how many retransmissions a transfer survives (DefaultRetries).
	Retries int
	// MaxWindow caps the windowsize granted (DefaultMaxWindow); 1: windowsize
	// is not negotiated.
	MaxWindow int
	// MaxWindowBytes caps windowsize x blksize, the bytes one transfer has
	// in flight (DefaultMaxWindowBytes).
	MaxWindowBytes int
	Log            *slog.Logger
	// Registerer receives the server's metrics; nil: not registered.
	Registerer prometheus.Registerer
}

// Server is a read-only TFTP server with its port bound.
type Server struct {
	cfg  Config
	root *os.Root
	conn *net.UDPConn
	srv  *tftp.Server
	m    *metrics

	mu     sync.Mutex
	active map[string]int // client IP -> transfers in progress
}

// Listen opens the root and binds the port; Run serves.
func Listen(cfg Config) (*Server, error) {
	if cfg.Root == "" {
		cfg.Root = DefaultRoot
	}
	if cfg.PerClient <= 0 {
		cfg.PerClient = DefaultPerClient
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Retries <= 0 {
		cfg.Retries = DefaultRetries
	}
	if cfg.MaxWindow <= 0 {
		cfg.MaxWindow = DefaultMaxWindow
	}
	if cfg.MaxWindowBytes <= 0 {
		cfg.MaxWindowBytes = DefaultMaxWindowBytes
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	root, err := os.OpenRoot(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("tftp root: %w", err)
	}
	ua, err := net.ResolveUDPAddr("udp", cfg.Listen)
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("tftp listen %s: %w", cfg.Listen, err)
	}
	conn, err := net.ListenUDP("udp", ua)
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("tftp listen %s: %w", cfg.Listen, err)
	}
	pktinfo(conn)
	s := &Server{cfg: cfg, root: root, conn: conn, m: newMetrics(cfg.Registerer), active: map[string]int{}}
	s.srv = tftp.NewServer(s.read, nil)
	s.srv.SetTimeout(cfg.Timeout)
	s.srv.SetRetries(cfg.Retries)
	s.srv.SetHook(hook{s})
	return s, nil
}

// pktinfo asks the kernel for each datagram's destination address and
// interface, as pin/tftp's Serve does, but at once: a request queued before
// Serve turned them on would come without them, and pin/tftp would cap its
// blksize at 512 and answer from the wildcard address. Errors are pin's to
// meet again (it then serves without them).
func pktinfo(conn *net.UDPConn) {
	if conn.LocalAddr().(*net.UDPAddr).IP.To4() != nil {
		ipv4.NewPacketConn(conn).SetControlMessage(ipv4.FlagDst|ipv4.FlagInterface, true)
		return
	}
	ipv6.NewPacketConn(conn).SetControlMessage(ipv6.FlagDst|ipv6.FlagInterface, true)
}

// Addr is the bound address.
func (s *Server) Addr() *net.UDPAddr { return s.conn.LocalAddr().(*net.UDPAddr) }

// Run serves until ctx ends, then stops taking requests and waits for the
// transfers in progress (each ends at the latest after its retries time out).
func (s *Server) Run(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- s.srv.Serve(s.conn) }()
	select {
	case err := <-done:
		s.root.Close()
		return fmt.Errorf("tftp serve: %w", err)
	case <-ctx.Done():
	}
	s.srv.Shutdown()
	<-done
	return s.root.Close()
}

// Close releases a server that will not be run.
func (s *Server) Close() error { return errors.Join(s.conn.Close(), s.root.Close()) }

// Has reports whether name can be served (the DHCP server only names boot
// files that exist).
func (s *Server) Has(name string) bool {
	fi, err := s.root.Stat(name)
	return err == nil && fi.Mode().IsRegular()
}

// FS is the root as a file system (symlinks followed only inside it), for
// serving the same files over HTTP.
func (s *Server) FS() fs.FS { return s.root.FS() }

// read is pin/tftp's read handler: one RRQ.
func (s *Server) read(name string, rf io.ReaderFrom) error {
	ot := rf.(tftp.OutgoingTransfer)
	addr := ot.RemoteAddr()
	client := addr.IP.String()
	log := s.cfg.Log.With("client", addr.String(), "file", name)
	clean, err := cleanName(name)
	if err != nil {
		s.refuse(log, "path", err)
		return err
	}
	if !s.acquire(client) {
		s.refuse(log, "busy", ErrBusy)
		return ErrBusy
	}
	defer s.release(client)
	f, err := s.root.Open(clean)
	if err != nil {
		return s.openFailed(log, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		s.refuse(log, "not_regular", ErrNotFound)
		return ErrNotFound
	}
	if r, ok := requestOf(rf); ok {
		if win := windowOf(r, s.cfg.MaxWindow, s.cfg.MaxWindowBytes); win > 1 {
			// nil: an error would have pin/tftp send an ERROR from its
			// own socket, a TID the client never saw.
			s.serveWindowed(rf, name, f, fi.Size(), r, win)
			return nil
		}
	}
	ot.SetSize(fi.Size())
	n, err := rf.ReadFrom(f)
	s.m.bytes.Add(float64(n))
	return err
}

// cleanName turns a requested name into one relative to the root, or
// refuses it: absolute paths and any ".." element. Backslashes (some
// Windows-born PXE stacks send them) count as separators.
func cleanName(name string) (string, error) {
	name = strings.ReplaceAll(name, "\\", "/")
	if name == "" || strings.HasPrefix(name, "/") || strings.ContainsRune(name, 0) {
		return "", ErrDenied
	}
	for _, el := range strings.Split(name, "/") {
		if el == ".." {
			return "", ErrDenied
		}
	}
	return path.Clean(name), nil
}

// openFailed maps an open error to what the client is told: a missing file
// is ErrNotFound, anything else (a symlink leaving the root, permissions)
// ErrDenied. The server path stays in the server's log.
func (s *Server) openFailed(log *slog.Logger, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		s.refuse(log, "not_found", err)
		return ErrNotFound
	}
	s.refuse(log, "denied", err)
	return ErrDenied
}

func (s *Server) refuse(log *slog.Logger, reason string, err error) {
	s.m.refused.WithLabelValues(reason).Inc()
	log.Info("tftp_refused", "reason", reason, "err", err)
}

func (s *Server) acquire(client string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active[client] >= s.cfg.PerClient {
		return false
	}
	s.active[client]++
	return true
}

func (s *Server) release(client string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active[client]--; s.active[client] <= 0 {
		delete(s.active, client)
	}
}

// hook logs and counts every finished transfer.
type hook struct{ s *Server }

func (h hook) OnSuccess(st tftp.TransferStats) {
	h.s.m.transfers.WithLabelValues("ok").Inc()
	h.s.cfg.Log.Info("tftp_transfer", "client", st.RemoteAddr.String(), "file", st.Filename,
		"duration", st.Duration, "blksize", st.Opts["blksize"], "datagrams", st.DatagramsSent)
}

func (h hook) OnFailure(st tftp.TransferStats, err error) {
	h.s.m.transfers.WithLabelValues("failed").Inc()
	h.s.cfg.Log.Info("tftp_transfer_failed", "client", st.RemoteAddr.String(), "file", st.Filename, "err", err)
}

type metrics struct {
	transfers *prometheus.CounterVec
	refused   *prometheus.CounterVec
	bytes     prometheus.Counter
	windowed  prometheus.Counter
	resent    prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		transfers: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tftp_transfers_total",
			Help: "TFTP transfers finished, by result (ok, failed; failed includes refused requests and writes)."}, []string{"result"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tftp_refused_total",
			Help: "TFTP read requests refused, by reason (path, busy, not_found, denied, not_regular)."}, []string{"reason"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "tftp_sent_bytes_total", Help: "File bytes sent over TFTP."}),
		windowed: prometheus.NewCounter(prometheus.CounterOpts{Name: "tftp_windowed_transfers_total",
			Help: "TFTP transfers started with a negotiated windowsize (RFC 7440); also counted in tftp_transfers_total when they end."}),
		resent: prometheus.NewCounter(prometheus.CounterOpts{Name: "tftp_window_resent_total",
			Help: "Datagrams (OACK or DATA) that windowed TFTP transfers sent again, after a timeout or an ACK of an earlier block."}),
	}
	if reg != nil {
		reg.MustRegister(m.transfers, m.refused, m.bytes, m.windowed, m.resent)
	}
	return m
}
