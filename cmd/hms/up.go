package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sync/errgroup"

	"github.com/hmsuite/hms/fanout"
	"github.com/hmsuite/hms/heartbeat"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/ipxe"
	"github.com/hmsuite/hms/layout"
	"github.com/hmsuite/hms/statemgr"
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
	dir := f.String("data-dir", "./hms-data", "`DIR` holding each daemon's SQLite file and hsm's credential key (created if absent)")
	slsListen := f.ListenNamed("sls-listen", ":8376", "`HOST:PORT` sls serves on")
	hsmListen := f.ListenNamed("hsm-listen", ":27779", "`HOST:PORT` hsm serves on")
	hbtdListen := f.ListenNamed("hbtd-listen", ":28500", "`HOST:PORT` hbtd serves on")
	nfdListen := f.ListenNamed("hmnfd-listen", ":28600", "`HOST:PORT` hmnfd serves on")
	bssListen := f.ListenNamed("bss-listen", ":27778", "`HOST:PORT` bss serves on")
	bssAdvertise := f.URL("bss-advertise-url", "", "base `URL` booting nodes reach bss on (default bss's own URL)")
	hmsConfig := f.String("hms-config", getenv("HMS_CONFIG_PATH"), "hsm's site hms_config.json `FILE` (default $HMS_CONFIG_PATH)")
	level := f.LogLevel()
	if err := f.ParseOrUsage(args); err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o750); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	log := cli.NewLogger(os.Stderr, *level)
	// The in-process bus carries hsm's SCNs and hbtd's heartbeat changes for
	// in-process consumers; none of the four daemons needs it, so it keeps
	// only the newest messages.
	mem := bus.NewUnread()
	defer mem.Close()
	db := func(name string) string { return filepath.Join(*dir, name+".db") }

	var started []daemon
	start := func(name string, d daemon, err error) error {
		if err != nil {
			for _, s := range started {
				s.Close()
			}
			return fmt.Errorf("start %s: %w", name, err)
		}
		started = append(started, d)
		fmt.Fprintf(stdout, "%-6s %s\n", name, d.URL())
		return nil
	}
	sls, err := layout.StartDaemon(ctx, layout.DaemonConfig{Listen: *slsListen, DB: db("sls"), Log: log.With("daemon", "sls")})
	if err := start("sls", sls, err); err != nil {
		return err
	}
	hsm, err := statemgr.StartDaemon(ctx, statemgr.DaemonConfig{Listen: *hsmListen, DB: db("hsm"), SLSURL: sls.URL(),
		Publisher: mem, CredKeyFile: filepath.Join(*dir, "hsm-cred.key"), HMSConfig: *hmsConfig, Log: log.With("daemon", "hsm")})
	if err := start("hsm", hsm, err); err != nil {
		return err
	}
	hbtd, err := heartbeat.StartDaemon(ctx, *hbtdListen, heartbeat.Options{DBPath: db("hbtd"), HSMURL: hsm.URL(),
		Publisher: mem, Log: log.With("daemon", "hbtd")})
	if err := start("hbtd", hbtd, err); err != nil {
		return err
	}
	// hmnfd takes SCNs through HSM's durable callback subscription, not
	// from the in-process bus: HSM moves its bus cursor once a message is in
	// memory, so SCNs hmnfd had not stored yet would be lost when hms up
	// stops; a subscription's cursor moves only when hmnfd has stored them.
	nfd, err := fanout.StartDaemon(ctx, fanout.DaemonConfig{Listen: *nfdListen, DB: db("hmnfd"), HSMURL: hsm.URL(),
		Log: log.With("daemon", "hmnfd")})
	if err := start("hmnfd", nfd, err); err != nil {
		return err
	}
	// bss, like hmnfd, follows HSM through its durable callback subscription.
	bss, err := ipxe.StartDaemon(ctx, ipxe.DaemonConfig{Listen: *bssListen, DB: db("bss"), HSMURL: hsm.URL(),
		AdvertiseURL: *bssAdvertise, Log: log.With("daemon", "bss")})
	if err := start("bss", bss, err); err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, d := range started {
		g.Go(func() error { return d.Run(gctx) })
	}
	select {
	case <-waitAll(gctx, nfd.Intake(), bss.Service().Subscribed()):
		fmt.Fprintln(stdout, "ready")
	case <-gctx.Done():
	}
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
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

// The daemons' constructors return concrete types; make sure they fit.
var (
	_ daemon = (*layout.Daemon)(nil)
	_ daemon = (*statemgr.Daemon)(nil)
	_ daemon = (*heartbeat.Daemon)(nil)
	_ daemon = (*fanout.Daemon)(nil)
	_ daemon = (*ipxe.Daemon)(nil)
)
