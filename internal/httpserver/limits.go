package httpserver

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Defaults for the connection limits of a Server (issue 18: slow clients).
const (
	// DefaultBodyTimeout bounds reading a whole request body on ordinary routes.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultBulkBodyTimeout bounds reading a body on bulk routes (IsBulkRoute).
	DefaultBulkBodyTimeout = 10 * time.Minute
	// DefaultMaxConns caps the connections a daemon holds open at once.
	DefaultMaxConns = 4096
)

// IsBulkRoute is the default route classifier of Server.IsBulk: uploads and
// bulk writes that may carry hundreds of MiB (SLS /loadstate, HSM /Bulk*
// PATCHes and bulk POSTs to collections) get the long body deadline. It
// matches on the path suffix so the CSM gateway prefixes do not matter.
func IsBulkRoute(r *http.Request) bool {
	p := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case strings.HasSuffix(p, "/loadstate"):
		return true
	case strings.Contains(p, "/Bulk"):
		return true
	case r.Method == http.MethodPost && (strings.HasSuffix(p, "/State/Components") ||
		strings.HasSuffix(p, "/Inventory/Hardware") || strings.HasSuffix(p, "/Inventory/ComponentEndpoints") ||
		strings.HasSuffix(p, "/Inventory/RedfishEndpoints")):
		return true
	}
	return false
}

// bodyDeadline sets a read deadline covering the request body (the header
// has its own ReadHeaderTimeout) and clears it once the body hit EOF, so a
// handler that works longer than the deadline after reading is not cut off
// (net/http's background read would otherwise see the timeout and cancel
// the request context).
func (s *Server) bodyDeadline(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	d := s.BodyTimeout
	if s.IsBulk != nil && s.IsBulk(r) {
		d = s.BulkBodyTimeout
	}
	if d <= 0 {
		return
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(d)) != nil {
		return
	}
	r.Body = &deadlineBody{ReadCloser: r.Body, clear: func() { _ = rc.SetReadDeadline(time.Time{}) }}
}

type deadlineBody struct {
	io.ReadCloser
	clear func()
	done  bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		b.clear()
	}
	return n, err
}

// limitListener answers connections beyond max with a bare 503 and closes them.
type limitListener struct {
	net.Listener
	max  int64
	open atomic.Int64
	log  *slog.Logger
}

const overloadBody = `{"type":"about:blank","title":"Service Unavailable","detail":"too many open connections","status":503}` + "\n"

var overloadResponse = "HTTP/1.1 503 Service Unavailable\r\n" +
	"Content-Type: application/problem+json\r\nConnection: close\r\nContent-Length: " +
	strconv.Itoa(len(overloadBody)) + "\r\n\r\n" + overloadBody

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) <= l.max {
			return &countedConn{Conn: c, l: l}, nil
		}
		l.open.Add(-1)
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = io.WriteString(c, overloadResponse)
		_ = c.Close()
		l.log.Warn("connection_refused_over_cap", "remote", c.RemoteAddr().String(), "max_connections", l.max)
	}
}

type countedConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}

// RaiseFileLimit raises the soft RLIMIT_NOFILE to the hard limit, so the
// connection cap rather than the descriptor limit decides when a daemon
// stops accepting. It logs the new value when it changed it.
func RaiseFileLimit(log *slog.Logger) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	if lim.Cur >= lim.Max {
		return nil
	}
	old := lim.Cur
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	log.Info("rlimit_nofile_raised", "from", old, "to", lim.Cur)
	return nil
}

func isBodyTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}
