package fanout

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/internal/httpclient"
)

// h1Client POSTs deliveries to plain http:// subscribers over pooled HTTP/1.1
// keep-alive connections. It exists for speed: net/http's client spends
// about 23 us of CPU per request on loopback (a context, a timer, two
// goroutines per connection and channel hand-offs between them), this one
// about 4 us, and on a fan-out of one SCN to 10,000 subscribers that is most
// of the CPU. The sending goroutine writes the request and reads the
// response itself; the per-request timeout is a connection deadline.
//
// It speaks only what a delivery needs: one request per connection at a time
// (no pipelining, so a hanging subscriber holds only its own connection),
// responses framed by Content-Length, chunked encoding or connection close,
// 1xx responses skipped, redirects treated as failures. https:// subscribers
// and subscribers behind a proxy go through net/http.
type h1Client struct {
	timeout time.Duration
	maxIdle int // idle connections kept per host
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	// auth, when set, gives the Bearer token each request carries.
	auth func(ctx context.Context) (string, error)
	// authHosts are the hosts besides loopback the token goes to.
	authHosts token.Hosts

	mu     sync.Mutex
	idle   map[string][]*h1Conn // by host:port, most recently used last
	nidle  int                  // connections in idle
	swept  time.Time            // last sweep of expired idle connections
	open   map[*h1Conn]struct{} // every connection, idle or in use (close ends them all)
	closed bool
}

// h1MaxIdleTotal bounds the idle connections kept over all subscribers, so
// thousands of node subscribers cannot pin as many sockets (and file
// descriptors) for good.
const h1MaxIdleTotal = 4096

// h1IdleTimeout is how long an unused connection is kept: servers close idle
// keep-alive connections after a while (net/http after its IdleTimeout,
// nginx after 75 s), and reusing one they already closed costs a retry.
const h1IdleTimeout = 30 * time.Second

// h1MaxDrain is the most response body read to keep a connection reusable.
const h1MaxDrain = 64 << 10

func newH1Client(timeout time.Duration, maxIdle int) *h1Client {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	return &h1Client{timeout: timeout, maxIdle: maxIdle, dial: d.DialContext,
		idle: map[string][]*h1Conn{}, open: map[*h1Conn]struct{}{}}
}

// h1Target is a subscriber URL parsed once for h1Client.
type h1Target struct {
	addr string // host:port to dial
	head []byte // request line and headers up to "Content-Length: "
}

// newH1Target parses raw; ok is false when it is not a plain http:// URL.
func newH1Target(raw string) (h1Target, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.User != nil {
		return h1Target{}, false
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	head := fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: hmnfd\r\nContent-Type: application/json\r\nContent-Length: ",
		u.RequestURI(), u.Host)
	return h1Target{addr: net.JoinHostPort(u.Hostname(), port), head: head}, true
}

// h1Conn is one keep-alive connection.
type h1Conn struct {
	addr     string
	nc       net.Conn
	br       *bufio.Reader
	req      []byte // request buffer, reused
	used     time.Time
	deadline time.Time // of nc, as last set
	reused   bool      // served a request before the current one
	gotResp  bool      // bytes of the current response were read
}

// errClientClosed is returned for requests after close.
var errClientClosed = errors.New("delivery client closed")

// post sends body to t and returns nil on a 2xx answer. A request on a
// reused connection that fails before any byte of the answer arrives is sent
// once more on a fresh connection: the server most likely closed the idle
// connection, and deliveries are at least once anyway.
func (c *h1Client) post(ctx context.Context, t *h1Target, body []byte) error {
	var bearer string
	if c.auth != nil && c.authHosts.AllowsAddr(t.addr) {
		tok, err := c.auth(ctx)
		if err != nil {
			return fmt.Errorf("post to %s: %w", t.addr, err)
		}
		bearer = tok
	}
	for {
		cn, err := c.get(ctx, t.addr)
		if err != nil {
			return err
		}
		status, keep, err := cn.roundTrip(t, body, bearer, c.timeout)
		c.put(cn, err == nil && keep)
		if err != nil {
			if cn.reused && !cn.gotResp && !isTimeout(err) && ctx.Err() == nil {
				continue
			}
			return fmt.Errorf("post to %s: %w", t.addr, err)
		}
		if status < 200 || status > 299 {
			return fmt.Errorf("subscriber %w", httpclient.StatusError(status))
		}
		return nil
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// get takes an idle connection to addr or dials one.
func (c *h1Client) get(ctx context.Context, addr string) (*h1Conn, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errClientClosed
	}
	for l := c.idle[addr]; len(l) > 0; l = c.idle[addr] {
		cn := l[len(l)-1]
		c.idle[addr] = l[:len(l)-1]
		c.nidle--
		if time.Since(cn.used) > h1IdleTimeout {
			c.drop(cn)
			continue
		}
		c.mu.Unlock()
		cn.reused = true
		return cn, nil
	}
	c.mu.Unlock()
	nc, err := c.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	cn := &h1Conn{addr: addr, nc: nc, br: bufio.NewReaderSize(nc, 4096)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		nc.Close()
		return nil, errClientClosed
	}
	c.open[cn] = struct{}{}
	return cn, nil
}

// drop closes cn and forgets it; c.mu is held.
func (c *h1Client) drop(cn *h1Conn) {
	cn.nc.Close()
	delete(c.open, cn)
}

// put returns cn to the pool, or closes it. Every h1IdleTimeout/2 it also
// closes the connections idle for longer than h1IdleTimeout, to every host:
// a subscriber that is not posted to again (deleted, expired, quiet) must
// not keep its socket open.
func (c *h1Client) put(cn *h1Conn, keep bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if now.Sub(c.swept) > h1IdleTimeout/2 {
		c.sweep(now)
	}
	if !keep || c.closed || len(c.idle[cn.addr]) >= c.maxIdle || c.nidle >= h1MaxIdleTotal {
		c.drop(cn)
		return
	}
	cn.used = now
	c.idle[cn.addr] = append(c.idle[cn.addr], cn)
	c.nidle++
}

// sweep closes the idle connections unused since h1IdleTimeout; c.mu is held.
func (c *h1Client) sweep(now time.Time) {
	c.swept = now
	for addr, l := range c.idle {
		keep := l[:0]
		for _, cn := range l {
			if now.Sub(cn.used) > h1IdleTimeout {
				c.drop(cn)
				c.nidle--
				continue
			}
			keep = append(keep, cn)
		}
		if len(keep) == 0 {
			delete(c.idle, addr)
		} else {
			clear(l[len(keep):])
			c.idle[addr] = keep
		}
	}
}

// close closes every connection, which ends requests in flight, and refuses
// new requests.
func (c *h1Client) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for cn := range c.open {
		cn.nc.Close()
	}
	c.idle, c.open, c.nidle = map[string][]*h1Conn{}, map[*h1Conn]struct{}{}, 0
}

// roundTrip writes one request and reads the status of its answer; keep
// reports whether the connection can carry another request.
func (cn *h1Conn) roundTrip(t *h1Target, body []byte, bearer string, timeout time.Duration) (status int, keep bool, err error) {
	cn.gotResp = false
	// The deadline moves only once a quarter of timeout has passed since
	// it was last set, so a request has between 3/4 of timeout and all of
	// it: setting a deadline changes two runtime timers, which on a busy
	// connection was a cost per request worth saving (issue 20).
	if now := time.Now(); cn.deadline.Sub(now) < timeout-timeout/4 {
		if err := cn.nc.SetDeadline(now.Add(timeout)); err != nil {
			return 0, false, err
		}
		cn.deadline = now.Add(timeout)
	}
	cn.req = append(cn.req[:0], t.head...)
	cn.req = strconv.AppendInt(cn.req, int64(len(body)), 10)
	if bearer != "" {
		cn.req = append(cn.req, "\r\nAuthorization: Bearer "...)
		cn.req = append(cn.req, bearer...)
	}
	cn.req = append(cn.req, "\r\n\r\n"...)
	cn.req = append(cn.req, body...)
	if _, err := cn.nc.Write(cn.req); err != nil {
		return 0, false, err
	}
	for {
		status, keep, err = cn.readResponse()
		if err != nil || status >= 200 || status == 101 {
			break
		}
	}
	if err == nil && status == 101 {
		return 0, false, errors.New("subscriber switched protocols")
	}
	return status, keep, err
}

// readResponse reads one response and discards its body.
func (cn *h1Conn) readResponse() (status int, keep bool, err error) {
	line, err := cn.line()
	if err != nil {
		return 0, false, err
	}
	proto, rest, _ := bytes.Cut(line, []byte(" "))
	code, _, _ := bytes.Cut(rest, []byte(" "))
	status, err = strconv.Atoi(string(code))
	if err != nil || len(code) != 3 || !bytes.HasPrefix(proto, []byte("HTTP/1.")) {
		return 0, false, fmt.Errorf("malformed status line %q", line)
	}
	// proto points into the reader's buffer, which the header lines reuse.
	http10 := string(proto) == "HTTP/1.0"
	keep = !http10
	length, chunked := int64(-1), false
	for n := 0; ; n++ {
		h, err := cn.line()
		if err != nil {
			return 0, false, err
		}
		if len(h) == 0 {
			break
		}
		if n > 100 {
			return 0, false, errors.New("too many response header lines")
		}
		name, val, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return 0, false, fmt.Errorf("malformed header line %q", h)
		}
		val = bytes.TrimSpace(val)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.ParseInt(string(val), 10, 64); err != nil || length < 0 {
				return 0, false, fmt.Errorf("malformed Content-Length %q", val)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(val, []byte("chunked"))
			if !chunked {
				return 0, false, fmt.Errorf("unsupported Transfer-Encoding %q", val)
			}
		case bytes.EqualFold(name, []byte("Connection")):
			if bytes.EqualFold(val, []byte("close")) {
				keep = false
			} else if bytes.EqualFold(val, []byte("keep-alive")) && http10 {
				keep = true
			}
		}
	}
	switch {
	case status < 200 || status == 204 || status == 304:
		return status, keep, nil
	case chunked:
		return status, keep && cn.discardChunked() == nil, nil
	case length >= 0:
		if length > h1MaxDrain {
			return status, false, nil
		}
		_, err := cn.br.Discard(int(length))
		return status, keep && err == nil, nil
	default: // the body runs to the end of the connection
		_, _ = io.CopyN(io.Discard, cn.br, h1MaxDrain)
		return status, false, nil
	}
}

// line reads one CRLF- (or LF-) terminated line without its terminator.
func (cn *h1Conn) line() ([]byte, error) {
	l, err := cn.br.ReadSlice('\n')
	if len(l) > 0 {
		cn.gotResp = true
	}
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, errors.New("response header line too long")
		}
		return nil, err
	}
	return bytes.TrimSuffix(l[:len(l)-1], []byte("\r")), nil
}

// discardChunked reads a chunked body and its trailers.
func (cn *h1Conn) discardChunked() error {
	total := int64(0)
	for {
		l, err := cn.line()
		if err != nil {
			return err
		}
		sz, _, _ := bytes.Cut(l, []byte(";"))
		n, err := strconv.ParseInt(string(bytes.TrimSpace(sz)), 16, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("malformed chunk size %q", l)
		}
		if total += n; total > h1MaxDrain {
			return errors.New("response body too long to drain")
		}
		if n == 0 {
			for {
				if t, err := cn.line(); err != nil || len(t) == 0 {
					return err
				}
			}
		}
		if _, err := cn.br.Discard(int(n)); err != nil {
			return err
		}
		if l, err := cn.line(); err != nil {
			return err
		} else if len(l) != 0 {
			return errors.New("chunk not followed by CRLF")
		}
	}
}
