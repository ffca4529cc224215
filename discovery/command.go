package discovery

import (
	"context"
	"io"
	"os"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/cli"
)

// Command is the run function of a discovery binary named name (reds or
// meds, with REDSDefaults or MEDSDefaults): flags with env twins
// HMS_<NAME>_*, the Kafka bus when -kafka-brokers names one, the daemon
// until ctx ends. The two binaries differ only in their defaults.
func Command(name string, d Defaults) func(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	return func(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
		f := cli.NewFlagSet(name, getenv, stdout)
		fl := RegisterFlagsWith(f, d)
		af := auth.RegisterFlags(f)
		if err := f.ParseOrUsage(args); err != nil {
			return err
		}
		cfg, err := fl.Config()
		if err != nil {
			return err
		}
		if cfg.Auth, err = af.Config(AuthTable()); err != nil {
			return err
		}
		cfg.Log = cli.NewLogger(os.Stderr, *fl.Level)
		if len(*fl.Brokers) > 0 {
			kb, err := bus.NewKafka(bus.KafkaConfig{Brokers: *fl.Brokers, ClientID: name, Log: cfg.Log})
			if err != nil {
				return err
			}
			defer kb.Close()
			cfg.Bus = kb
		}
		dm, err := StartDaemon(ctx, cfg)
		if err != nil {
			return err
		}
		return dm.Run(ctx)
	}
}
