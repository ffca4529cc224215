// Command reds is endpoint discovery: it places new BMCs (River: DHCP lease
// -> switch port over SNMP -> SLS connector -> xname; Mountain: computed
// from the SLS chassis), gives each its own Redfish credentials, registers
// it in HSM as a RedfishEndpoint, and retires BMCs that are gone and
// removed from SLS. One daemon plays both the REDS and MEDS roles
// (-roles); see docs/discovery.md.
package main

import (
	"context"
	"io"
	"os"

	"github.com/hmsuite/hms/discovery"
	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/cli"
)

func main() { cli.Main("reds", run) }

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	f := cli.NewFlagSet("reds", getenv, stdout)
	fl := discovery.RegisterFlags(f)
	af := auth.RegisterFlags(f)
	if err := f.ParseOrUsage(args); err != nil {
		return err
	}
	cfg, err := fl.Config()
	if err != nil {
		return err
	}
	if cfg.Auth, err = af.Config(discovery.AuthTable()); err != nil {
		return err
	}
	cfg.Log = cli.NewLogger(os.Stderr, *fl.Level)
	if len(*fl.Brokers) > 0 {
		kb, err := bus.NewKafka(bus.KafkaConfig{Brokers: *fl.Brokers, ClientID: "reds", Log: cfg.Log})
		if err != nil {
			return err
		}
		defer kb.Close()
		cfg.Bus = kb
	}
	d, err := discovery.StartDaemon(ctx, cfg)
	if err != nil {
		return err
	}
	return d.Run(ctx)
}
