package redfish

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"sync"
)

// maxBody caps one Redfish response; a BMC that sends more is treated as
// sending garbage rather than being allowed to fill memory.
const maxBody = 16 << 20

// errBodyTooLarge is returned by a body read past maxBody.
var errBodyTooLarge = errors.New("redfish response larger than 16 MiB")

// meter wraps the transport used for one BMC. It adds basic auth to every
// request to the BMC's own origin (scheme and host[:port] of its base URL),
// the service root included (gofish would send it only after reading the
// root, and some BMCs protect the root too), and to no other: a redirect to
// another host or scheme carries no credentials. It bounds the requests in flight
// (a slot is held from sending a request until its body is closed or fully
// read), counts requests, and keeps every open body so that the walk can close
// whatever a caller forgot; closeAll reports how many it had to close.
type meter struct {
	base       http.RoundTripper
	sem        chan struct{}
	user, pass string
	// origin is the scheme and host credentials may go to ("" sends none).
	scheme, host string

	mu       sync.Mutex
	requests int
	open     map[*meteredBody]struct{}
}

func newMeter(base http.RoundTripper, limit int) *meter {
	return &meter{base: base, sem: make(chan struct{}, limit), open: map[*meteredBody]struct{}{}}
}

// RoundTrip implements http.RoundTripper.
func (m *meter) RoundTrip(req *http.Request) (*http.Response, error) {
	select {
	case m.sem <- struct{}{}:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	m.mu.Lock()
	m.requests++
	m.mu.Unlock()
	if m.user != "" && req.URL.Scheme == m.scheme && req.URL.Host == m.host {
		req = req.Clone(req.Context())
		req.SetBasicAuth(m.user, m.pass)
	}
	resp, err := m.base.RoundTrip(req)
	if err != nil {
		<-m.sem
		return nil, err
	}
	b := &meteredBody{rc: resp.Body, r: io.LimitReader(resp.Body, maxBody+1), m: m}
	m.mu.Lock()
	m.open[b] = struct{}{}
	m.mu.Unlock()
	resp.Body = b
	return resp, nil
}

// authorize makes m send user and pass to base's origin, and nowhere else.
func (m *meter) authorize(base, user, pass string) {
	if u, err := url.Parse(base); err == nil {
		m.scheme, m.host = u.Scheme, u.Host
	}
	m.user, m.pass = user, pass
}

// stats returns the number of requests sent and of bodies still open.
func (m *meter) stats() (requests, open int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.requests, len(m.open)
}

// closeAll closes every body still open and returns how many there were.
func (m *meter) closeAll() int {
	m.mu.Lock()
	left := make([]*meteredBody, 0, len(m.open))
	for b := range m.open {
		left = append(left, b)
	}
	m.mu.Unlock()
	for _, b := range left {
		_ = b.Close()
	}
	return len(left)
}

// meteredBody releases its meter slot once, on Close. A body nobody closes
// keeps its slot until closeAll, so a leak shows up as a stalled walk in tests
// rather than as a socket leak in production.
type meteredBody struct {
	rc   io.ReadCloser
	r    io.Reader
	m    *meter
	n    int64
	once sync.Once
}

func (b *meteredBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > maxBody {
		return n, errBodyTooLarge
	}
	return n, err
}

func (b *meteredBody) Close() error {
	err := b.rc.Close()
	b.once.Do(func() {
		b.m.mu.Lock()
		delete(b.m.open, b)
		b.m.mu.Unlock()
		<-b.m.sem
	})
	return err
}
