package dhcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4/server4"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/ipv4"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/sqldb"
)

// ServerConfig configures a Server.
type ServerConfig struct {
	Handler Config
	// Interface is the link to serve (SO_BINDTODEVICE); empty: any (tests).
	Interface string
	// Listen is the address to bind; nil: 0.0.0.0:67.
	Listen *net.UDPAddr
	// RelayPort and ClientPort are where replies go (67, 68); ReplyToPeer
	// sends every reply to the packet's source instead (tests on loopback,
	// where nothing listens on the broadcast address).
	RelayPort, ClientPort int
	ReplyToPeer           bool
	// BootServer is where a proxy-mode server also answers PXE boot server
	// requests (usually port 4011, BootServerPort); nil: not served.
	BootServer *net.UDPAddr
	Lookup     Lookup
	// Publisher receives the lease events on lease.Topic; nil: not published
	// (and not queued).
	Publisher bus.Publisher
	// HSM receives unknown MACs; nil: not written.
	HSM        HSM
	Now        func() time.Time
	Log        *slog.Logger
	Registerer prometheus.Registerer
}

// Server is the DHCP server with its leases loaded and its port bound.
type Server struct {
	cfg    ServerConfig
	h      *Handler
	store  *Store
	conn   *net.UDPConn
	pc     *ipv4.PacketConn // conn, for batched reads and writes
	boot   *net.UDPConn     // the PXE boot server socket (proxy mode), or nil
	m      *metrics
	rq     *request  // the read loop's, parsed into packet after packet
	dgrams sync.Pool // *datagram, reused once sent

	mu      sync.Mutex // orders Handle and the queueing of its change
	pending []pendingChange
	stopped bool          // the writer has stored its last batch; s.mu
	wake    chan struct{} // the writer has work (Expire, outbox rows to drop)

	// commitMu orders the commits (the read loop's and the writer's) and
	// guards what they reuse.
	commitMu sync.Mutex
	dropped  int64           // outbox rows deleted up to here
	spare    []pendingChange // the last batch's slice, for the next
	changes  []*Change       // a batch's changes, for Apply
	acks     outbound        // a batch's replies
	stored   chan struct{}   // a batch is committed (the bus relay looks)
	// storedHSM: a batch is committed (the HSM relay looks)
	storedHSM chan struct{}

	warned sync.Map // drop reason -> logged once at warn

	relayedMu sync.Mutex
	relayed   chan struct{} // closed and replaced after each relay round

	published atomic.Int64 // last outbox row the bus took; the writer deletes up to it

	outMu  sync.Mutex
	outbox []outboxRow // committed events for the relay, in order
}

type pendingChange struct {
	c     *Change
	reply *datagram // sent once c is stored (nil: none)
	done  chan error
}

// Listen loads the leases from db (bss's database) and binds the port.
func Listen(ctx context.Context, cfg ServerConfig, db *sqldb.DB) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RelayPort == 0 {
		cfg.RelayPort = ServerPort
	}
	if cfg.ClientPort == 0 {
		cfg.ClientPort = ClientPort
	}
	if cfg.Listen == nil {
		cfg.Listen = &net.UDPAddr{IP: net.IPv4zero, Port: ServerPort}
	}
	store, err := OpenStore(ctx, db)
	if err != nil {
		return nil, err
	}
	ls, err := store.Leases(ctx)
	if err != nil {
		return nil, err
	}
	h := NewHandler(cfg.Handler, cfg.Lookup, cfg.Now)
	h.Load(ls)
	conn, err := server4.NewIPv4UDPConn(cfg.Interface, cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("dhcp listen on %s %s: %w", cfg.Interface, cfg.Listen, err)
	}
	boot, err := listenBootServer(cfg)
	if err != nil {
		conn.Close()
		return nil, err
	}
	left, err := store.outbox(ctx)
	if err != nil {
		conn.Close()
		if boot != nil {
			boot.Close()
		}
		return nil, err
	}
	growReadBuffer(conn)
	s := &Server{cfg: cfg, h: h, store: store, wake: make(chan struct{}, 1), stored: make(chan struct{}, 1),
		storedHSM: make(chan struct{}, 1), relayed: make(chan struct{}), outbox: left}
	s.m = newMetrics(cfg.Registerer, h)
	s.rq = &request{}
	s.conn, s.pc, s.boot = conn, ipv4.NewPacketConn(conn), boot
	return s, nil
}

// Addr is the bound address.
func (s *Server) Addr() *net.UDPAddr { return s.conn.LocalAddr().(*net.UDPAddr) }

// Handler is the server's handler (its lease table, for tests and tools).
func (s *Server) Handler() *Handler { return s.h }

// BootServerAddr is the bound PXE boot server address (nil: none).
func (s *Server) BootServerAddr() *net.UDPAddr {
	if s.boot == nil {
		return nil
	}
	return s.boot.LocalAddr().(*net.UDPAddr)
}

// Close releases a server that will not be run.
func (s *Server) Close() error {
	if s.boot != nil {
		s.boot.Close()
	}
	return s.conn.Close()
}

// Run serves until ctx ends. Replies wait for their lease to be stored;
// stored events go to the bus and unknown MACs to HSM in the background.
func (s *Server) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.read(gctx) })
	g.Go(func() error { <-gctx.Done(); return s.Close() })
	if s.boot != nil {
		g.Go(func() error { return s.serveBootServer(gctx) })
	}
	g.Go(func() error { return s.writer(gctx) })
	g.Go(func() error { return s.expirer(gctx) })
	g.Go(func() error { return s.relay(gctx, s.stored, s.publish) })
	g.Go(func() error { return s.relay(gctx, s.storedHSM, s.writeHSM) })
	return g.Wait()
}

// queue adds c to the next group commit; s.mu is held, so changes are
// stored in the order they were decided. After the commit its reply (if
// any) is sent and done (if any) told. The read loop commits what it queued
// itself, after each batch of packets; other callers wake the writer.
func (s *Server) queue(c *Change, reply *datagram, done chan error) {
	if s.cfg.Publisher == nil {
		c.Event = nil // nobody would ever take it from the outbox
	}
	if s.cfg.HSM == nil {
		c.NewMAC = false
	}
	if s.stopped {
		// Shutting down: the change is not stored and its reply not sent
		// (the client asks again); a waiter must not wait for a writer
		// that is gone.
		if done != nil {
			done <- errStopped
		}
		return
	}
	s.pending = append(s.pending, pendingChange{c: c, reply: reply, done: done})
}

func (s *Server) wakeWriter() { wake(s.wake) }

// writer commits the changes queued outside the read loop (Expire) and,
// woken by the expirer when no lease changes, drops the outbox rows the
// relay has published.
func (s *Server) writer(ctx context.Context) error {
	s.commit(ctx) // what was decided before Run
	for {
		select {
		case <-ctx.Done():
			s.final(ctx)
			return nil
		case <-s.wake:
			s.commit(ctx)
		}
	}
}

// commit stores the queued changes in one transaction, with the deletion
// of the outbox rows the bus has taken, then sends their replies and hands
// their events to the relays. The read loop calls it after each batch of
// packets, so a lease change costs no hand-over between goroutines (on a
// virtual machine each wake-up of another thread cost more CPU than the
// change itself); the packets that arrive meanwhile wait in the socket and
// make the next batch, and the next transaction, larger.
func (s *Server) commit(ctx context.Context) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.mu.Lock()
	batch := s.pending
	s.pending = s.spare[:0]
	s.mu.Unlock()
	pub := s.published.Load()
	if len(batch) == 0 && pub <= s.dropped {
		s.spare = batch
		return
	}
	if pub <= s.dropped {
		pub = 0
	}
	cs := s.changes[:0]
	newMACs := false
	for _, p := range batch {
		cs = append(cs, p.c)
		newMACs = newMACs || p.c.NewMAC
	}
	// A commit that has begun finishes even when ctx ends: its replies
	// are not sent, but what was decided is kept.
	rows, err := s.store.Apply(context.WithoutCancel(ctx), cs, pub)
	if err == nil && pub > 0 {
		s.dropped = pub
	}
	if err == nil && len(cs) > 0 {
		s.m.commits.Inc()
	}
	if err != nil {
		s.m.storeErrors.Inc()
		s.cfg.Log.Error("dhcp_store_failed", "changes", len(cs), "err", err)
		s.h.markUnstored(cs)
	}
	for _, p := range batch {
		switch {
		case p.reply == nil:
		case err == nil:
			s.acks.add(p.reply)
		default:
			s.release(p.reply) // the client retries what failed
		}
		if p.done != nil {
			p.done <- err
		}
	}
	s.send(&s.acks)
	if len(rows) > 0 || len(batch) > 0 {
		s.handOver(rows, err == nil && newMACs)
	}
	clear(cs)
	s.changes = cs[:0]
	clear(batch)
	s.spare = batch[:0]
}

// errStopped is what a change queued after the writer stopped gets.
var errStopped = errors.New("dhcp server stopped")

// final is the writer's last step at shutdown: it stores what was queued
// (decided, its reply not sent: kept, as a commit that has begun is), drops
// the published outbox rows (so a restart does not publish them again), and
// answers every waiter, here and from now on (queue), so that nothing, Expire
// in particular, waits for a writer that is gone.
func (s *Server) final(ctx context.Context) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.mu.Lock()
	s.stopped = true
	batch := s.pending
	s.pending = nil
	s.mu.Unlock()
	pub := s.published.Load()
	if pub <= s.dropped {
		pub = 0
	}
	var err error
	if len(batch) > 0 || pub > 0 {
		cs := make([]*Change, len(batch))
		for i, p := range batch {
			cs[i] = p.c
		}
		_, err = s.store.Apply(context.WithoutCancel(ctx), cs, pub)
	}
	for _, p := range batch {
		if p.done != nil {
			p.done <- errors.Join(err, errStopped)
		}
	}
}

// expirer ends leases past their time, once a second, and has the writer
// drop the published outbox rows.
func (s *Server) expirer(ctx context.Context) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			s.Expire()
			// Published outbox rows are deleted by the writer's next
			// transaction; this one, when no lease changed, so the outbox
			// does not grow while the server is idle.
			s.wakeWriter()
		}
	}
}

// Expire ends the leases past their time now: bound ones with an Expire
// event. It returns once the changes are stored.
func (s *Server) Expire() error {
	s.mu.Lock()
	cs := s.h.Expire()
	dones := make([]chan error, len(cs))
	for i, c := range cs {
		dones[i] = make(chan error, 1)
		s.queue(c, nil, dones[i])
	}
	s.mu.Unlock()
	if len(cs) > 0 {
		s.wakeWriter()
	}
	var errs []error
	for _, d := range dones {
		errs = append(errs, <-d)
	}
	s.m.expired.Add(float64(len(cs)))
	return errors.Join(errs...)
}

// drop counts a dropped packet and logs the first of each reason at warn
// (later ones at debug: a flood must not flood the log).
func (s *Server) drop(reason string, attrs ...any) {
	s.m.dropped.WithLabelValues(reason).Inc()
	level := slog.LevelDebug
	if _, seen := s.warned.LoadOrStore(reason, true); !seen {
		level = slog.LevelWarn
	}
	s.cfg.Log.Log(context.Background(), level, "dhcp_dropped", append([]any{"reason", reason}, attrs...)...)
}

// readBuffer is the socket receive buffer asked for: enough for a burst,
// but not so much that a queue seconds long builds up under overload
// (clients would time out on replies we still send; better the kernel drops
// early, as for Kea). 1 MiB holds about 1,300 small packets (the kernel
// counts per-packet overhead), a few hundred milliseconds of work.
const readBuffer = 1 << 20

// growReadBuffer raises the socket's receive buffer, past net.core.rmem_max
// when the process may (SO_RCVBUFFORCE needs CAP_NET_ADMIN).
func growReadBuffer(c *net.UDPConn) {
	c.SetReadBuffer(readBuffer)
	if rc, err := c.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, readBuffer)
		})
	}
}
