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
	"github.com/hmsuite/hms/internal/auth/token"
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
	local := f.Bool("auth-local", false, "check tokens with keys of the suite's own, made on first start under <data-dir>/auth (mode 0600): the daemons then refuse callers without a token; the admin token for the CLI is <data-dir>/auth/admin.token, bss gives nodes node tokens")
	// The order is the start order: each daemon's peers start before it.
	parts := []component{slsComponent(s), hsmComponent(s), hbtdComponent(s), hmnfdComponent(s), bssComponent(s), pcsComponent(s), bosComponent(s), nodesComponent(s), redsComponent(s)}
	if err := f.ParseOrUsage(args); err != nil {
		return err
	}
	config := af.Config
	if *local {
		config = af.LocalConfig // -auth-shadow and -metrics-auth use the keys made below
	}
	var err error
	if s.auth, err = config(authTables()...); err != nil {
		return err
	}
	if *local && (s.auth.On() || s.auth.Token.Set()) {
		return cli.Usagef("-%s makes the suite's own keys and token: drop -jwks-url, -jwt-key-file, -node-jwt-keys, -token and -token-file", f.Name("auth-local"))
	}
	for _, p := range parts {
		if err := p.check(); err != nil {
			return err
		}
	}
	if !*local && s.nodeKey != "" && !s.auth.On() {
		return cli.Usagef("-bss-node-token-key needs -auth-local, -jwks-url or -jwt-key-file (node tokens alone would refuse every admin and peer call)")
	}
	if err := os.MkdirAll(*s.dir, 0o750); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if err := s.prepareAuth(ctx, *local, stdout); err != nil {
		return err
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

// prepareAuth, before any daemon starts: with -auth-local, makes the
// suite's keys and admin token (auth.PrepareLocal) and has every daemon
// check tokens with them and send the admin token to its peers; with a
// node-token key for bss (hms up's own, or -bss-node-token-key) and no
// -node-jwt-keys, has the daemons check node tokens with that key.
func (s *suite) prepareAuth(ctx context.Context, local bool, stdout io.Writer) error {
	if local {
		l, err := auth.PrepareLocal(ctx, s.dataFile("auth"), nil)
		if err != nil {
			return err
		}
		s.auth.KeyFile, s.auth.Token.File = l.SigningJWKS, l.AdminToken
		s.scnToken = token.Config{File: l.SCNToken}
		if s.nodeKey == "" {
			s.nodeKey = l.NodeKey
		}
		log := cli.NewLogger(os.Stderr, *s.level)
		for _, p := range l.Made {
			log.Info("auth_file_made", "path", p)
		}
		fmt.Fprintln(stdout, "admin-token", l.AdminToken)
	}
	if s.nodeKey == "" || s.auth.NodeKeys != "" {
		return nil
	}
	signer, err := auth.LoadSigner(s.nodeKey, nil)
	if err != nil {
		return err
	}
	jwks := s.dataFile("node-token.jwks")
	if err := os.WriteFile(jwks, signer.JWKS(), 0o644); err != nil {
		return fmt.Errorf("node-token keys: %w", err)
	}
	s.auth.NodeKeys = jwks
	return nil
}

// dataFile is name under the data directory.
func (s *suite) dataFile(name string) string { return filepath.Join(*s.dir, name) }
