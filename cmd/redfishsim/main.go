// Command redfishsim serves simulated Redfish BMCs: one, or a fleet of -count
// BMCs on consecutive ports (or consecutive 127.x addresses with -by-address),
// from a generated model (-systems) or a DMTF mockup directory (-mockup).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/redfishsim"
)

func main() { cli.Main("redfishsim", run) }

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	f := cli.NewFlagSet("redfishsim", getenv, stdout)
	listen, level := f.Listen("127.0.0.1:8443"), f.LogLevel()
	count := f.Int("count", 1, "number of BMCs; with more than 1, -listen is the first address")
	byAddr := f.Bool("by-address", false, "spread a fleet over consecutive IPv4 addresses (same port) instead of ports")
	mockup := f.String("mockup", "", "serve this DMTF short-form mockup `DIR` instead of the generated model")
	systems := f.Int("systems", 1, "systems per BMC in the generated model")
	xname := f.String("xname", "", "xname of a single BMC (default x3000c0s0b0; a fleet is named x3000c0s<i>b0, ...)")
	user := f.String("user", redfishsim.DefaultUser, "user name that logs in")
	password := f.String("password", redfishsim.DefaultPassword, "password that logs in")
	useTLS := f.Bool("tls", true, "serve HTTPS with a self-signed certificate (false: plain HTTP)")
	var faults redfishsim.Faults
	faults.RegisterFlags(f.FlagSet)
	if err := f.ParseOrUsage(args); err != nil {
		return err
	}
	switch {
	case *count < 1 || *systems < 1:
		return &cli.UsageError{Err: errors.New("-count and -systems must be at least 1")}
	case *count > 1 && *xname != "":
		return &cli.UsageError{Err: errors.New("-xname names a single BMC; a fleet (-count > 1) is named automatically")}
	}
	if err := faults.Validate(); err != nil {
		return &cli.UsageError{Err: err}
	}
	log := cli.NewLogger(os.Stderr, *level)
	tree := redfishsim.Template(*systems)
	if *mockup != "" {
		var err error
		if tree, err = redfishsim.LoadMockup(*mockup); err != nil {
			return err
		}
	}
	cfg := redfishsim.FleetConfig{Count: *count, Listen: *listen, ByAddress: *byAddr, Tree: tree,
		User: *user, Password: *password, Faults: faults, Log: log}
	if *xname != "" {
		cfg.Xname = func(int) string { return *xname }
	}
	if *useTLS {
		var err error
		if cfg.TLS, err = redfishsim.NewTLSConfig(); err != nil {
			return err
		}
	}
	fleet, err := redfishsim.NewFleet(cfg)
	if err != nil {
		return err
	}
	for _, m := range fleet.Members() {
		fmt.Fprintf(stdout, "%s %s\n", m.BMC.Xname(), m.URL)
	}
	log.Info("serving", "bmcs", len(fleet.Members()), "tls", *useTLS)
	return fleet.Run(ctx)
}
