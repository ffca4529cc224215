package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sync/errgroup"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/cli"
)

// daemon is what up needs of each of the suite's daemons.
type daemon interface {
	URL() string
	Run(ctx context.Context) error
	Close() error
}

// up starts the daemons in dependency order (each one's URL is the next
// one's peer), prints where each listens, runs them, prints "ready" once
// hmnfd and bss are subscribed to hsm, and stops when ctx ends or one fails.
func up(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	f := cli.NewFlagSet("up", getenv, stdout)
	f.Program = "hms up"
	s := &suite{f: f, getenv: getenv, urls: map[string]string{},
		dir:   f.String("data-dir", "./hms-data", "`DIR` holding each daemon's SQLite file and hsm's credential key (created if absent)"),
		level: f.LogLevel()}
	af := auth.RegisterFlags(f) // one set for every daemon: -jwks-url, HMS_UP_JWKS_URL
	// The order is the start order: each daemon's peers start before it.
	parts := []component{slsComponent(s), hsmComponent(s), hbtdComponent(s), hmnfdComponent(s), bssComponent(s), pcsComponent(s), bosComponent(s), redsComponent(s)}
	if err := f.ParseOrUsage(args); err != nil {
		return err
	}
	var err error
	if s.auth, err = af.Config(authTables()...); err != nil {
		return err
	}
	for _, p := range parts {
		if err := p.check(); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(*s.dir, 0o750); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	// The in-process bus carries hsm's SCNs and hbtd's heartbeat changes for
	// in-process consumers; none of the daemons needs it, so it keeps
	// only the newest messages.
	s.bus = bus.NewUnread()
	defer s.bus.Close()
	started, err := startAll(ctx, s, parts, stdout)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, d := range started {
		g.Go(func() error { return d.Run(gctx) })
	}
	select {
	case <-waitAll(gctx, s.ready...):
		fmt.Fprintln(stdout, "ready")
	case <-gctx.Done():
	}
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// startAll starts parts in order and prints where each listens; if one fails
// to start, those already started are closed.
func startAll(ctx context.Context, s *suite, parts []component, stdout io.Writer) ([]daemon, error) {
	var started []daemon
	for _, p := range parts {
		d, err := p.start(ctx)
		if err != nil {
			for _, o := range started {
				o.Close()
			}
			return nil, fmt.Errorf("start %s: %w", p.name, err)
		}
		started = append(started, d)
		s.urls[p.name] = d.URL()
		fmt.Fprintf(stdout, "%-6s %s\n", p.name, d.URL())
	}
	return started, nil
}

// waitAll returns a channel closed once every one of chs is closed (or ctx ends).
func waitAll(ctx context.Context, chs ...<-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, ch := range chs {
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
		}
	}()
	return done
}

// dataFile is name under the data directory.
func (s *suite) dataFile(name string) string { return filepath.Join(*s.dir, name) }
