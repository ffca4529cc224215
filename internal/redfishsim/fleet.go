package redfishsim

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"

	"golang.org/x/sync/errgroup"
)

// FleetConfig describes many BMCs served by one process.
type FleetConfig struct {
	// Count is the number of BMCs (at least 1).
	Count int
	// Listen is the address of the first BMC, e.g. "127.0.0.1:0". The others
	// follow on the next ports, or on the next IPv4 addresses with the same
	// port when ByAddress is set (127.0.0.2:443, 127.0.0.3:443, ...; Linux
	// routes all of 127.0.0.0/8 to lo). Port 0 gives every BMC its own
	// ephemeral port.
	Listen string
	// ByAddress spreads the BMCs over addresses instead of ports.
	ByAddress bool
	// Xname names BMC i; nil means DefaultXname.
	Xname func(i int) string
	// Tree is served by every BMC; use Template so each gets its own MACs.
	Tree *Tree
	// User and Password log in to every BMC (see Config).
	User, Password string
	// TLS, if not nil, makes every BMC speak HTTPS with it (see NewTLSConfig).
	TLS *tls.Config
	// Faults are injected in every BMC from the start.
	Faults Faults
	// PasswordChangeRequired is Config.PasswordChangeRequired for every BMC.
	PasswordChangeRequired bool
	// Log receives server errors.
	Log *slog.Logger
	// OnPower, if not nil, is Config.OnPower of every BMC, told which BMC
	// (its xname) changed the PowerState of the resource at path.
	OnPower func(bmc, path, state string)
}

// Member is one BMC of a Fleet and where it listens.
type Member struct {
	// BMC is the simulated service, e.g. for SetFaults.
	BMC *BMC
	// Addr is the bound HOST:PORT.
	Addr string
	// URL is the base URL, "http(s)://HOST:PORT" (no path).
	URL string
	ln  net.Listener
}

// Fleet is a set of BMCs, each on its own listener, sharing one Tree and
// one TLS configuration.
type Fleet struct {
	members []Member
	tls     *tls.Config
}

// DefaultXname names BMC i of a fleet: x3000c0s<i>b0 for the first 64, then
// the next cabinets (x3001c0s0b0, ...), as a River rack of node BMCs.
func DefaultXname(i int) string {
	return fmt.Sprintf("x%dc0s%db0", 3000+i/64, i%64)
}

// NewFleet creates the BMCs and binds all their listeners, so addresses are
// known (and port 0 resolved) before Run. On error nothing stays bound.
func NewFleet(cfg FleetConfig) (*Fleet, error) {
	if cfg.Count < 1 {
		return nil, fmt.Errorf("redfishsim: fleet count %d is less than 1", cfg.Count)
	}
	if cfg.Xname == nil {
		cfg.Xname = DefaultXname
	}
	addrs, err := fleetAddrs(cfg.Listen, cfg.Count, cfg.ByAddress)
	if err != nil {
		return nil, err
	}
	scheme := "http"
	if cfg.TLS != nil {
		scheme = "https"
	}
	f := &Fleet{tls: cfg.TLS, members: make([]Member, 0, cfg.Count)}
	for i, addr := range addrs {
		b, err := New(Config{Xname: cfg.Xname(i), Tree: cfg.Tree, User: cfg.User, Password: cfg.Password,
			Faults: cfg.Faults, Seed: uint64(i), Log: cfg.Log, PasswordChangeRequired: cfg.PasswordChangeRequired,
			OnPower: fleetOnPower(cfg.OnPower, cfg.Xname(i))})
		if err != nil {
			f.Close()
			return nil, err
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("redfishsim: listen for BMC %d: %w", i, err)
		}
		bound := ln.Addr().String()
		f.members = append(f.members, Member{BMC: b, Addr: bound, URL: scheme + "://" + bound, ln: ln})
	}
	return f, nil
}

// fleetOnPower binds a fleet's OnPower to one BMC.
func fleetOnPower(f func(bmc, path, state string), bmc string) func(path, state string) {
	if f == nil {
		return nil
	}
	return func(path, state string) { f(bmc, path, state) }
}

// fleetAddrs lists the n addresses a fleet binds, starting at listen.
func fleetAddrs(listen string, n int, byAddress bool) ([]string, error) {
	ap, err := netip.ParseAddrPort(listen)
	if err != nil {
		return nil, fmt.Errorf("redfishsim: fleet address %q: want IP:PORT: %w", listen, err)
	}
	port, ip := int(ap.Port()), ap.Addr()
	out := make([]string, 0, n)
	for i := range n {
		switch {
		case byAddress:
			if i > 0 {
				ip = ip.Next()
			}
			if !ip.IsValid() || !ip.Is4() {
				return nil, fmt.Errorf("redfishsim: fleet of %d from %s runs out of IPv4 addresses", n, listen)
			}
			out = append(out, netip.AddrPortFrom(ip, uint16(port)).String())
		case port == 0:
			out = append(out, net.JoinHostPort(ip.String(), "0"))
		default:
			if port+i > 65535 {
				return nil, fmt.Errorf("redfishsim: fleet of %d from %s runs out of ports", n, listen)
			}
			out = append(out, net.JoinHostPort(ip.String(), strconv.Itoa(port+i)))
		}
	}
	return out, nil
}

// Members returns the BMCs in order, with their addresses.
func (f *Fleet) Members() []Member { return f.members }

// Run serves every BMC until ctx ends, then stops them all.
func (f *Fleet) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, m := range f.members {
		g.Go(func() error { return m.BMC.Serve(gctx, m.ln, f.tls) })
	}
	return g.Wait()
}

// Close releases the listeners of a fleet that will not be Run.
func (f *Fleet) Close() error {
	var errs []error
	for _, m := range f.members {
		if err := m.ln.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
