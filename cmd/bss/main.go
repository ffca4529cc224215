// Command bss is the Boot Script Service: boot parameters per node, role or
// tag, the iPXE script each booting node fetches, and its cloud-init data,
// behind the HMS BSS REST API on /boot/v1; with -dhcp-interface and
// -tftp-listen also the boot chain's DHCP and TFTP servers.
package main

import (
	"context"
	"io"
	"os"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/ipxe"
)

func main() { cli.Main("bss", run) }

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	f := cli.NewFlagSet("bss", getenv, stdout)
	fl := ipxe.RegisterFlags(f)
	af := auth.RegisterFlags(f)
	if err := f.ParseOrUsage(args); err != nil {
		return err
	}
	cfg, err := fl.Config()
	if err != nil {
		return err
	}
	if cfg.Auth, err = af.Config(ipxe.AuthTable()); err != nil {
		return err
	}
	cfg.Log = cli.NewLogger(os.Stderr, *fl.Level)
	var pub bus.Bus = bus.NewUnread() // standalone without Kafka: lease events stay in process
	if len(*fl.Brokers) > 0 {
		k, err := bus.NewKafka(bus.KafkaConfig{Brokers: *fl.Brokers, ClientID: "bss", Log: cfg.Log})
		if err != nil {
			return err
		}
		pub = k
	}
	defer pub.Close()
	cfg.Publisher = pub
	d, err := ipxe.StartDaemon(ctx, cfg)
	if err != nil {
		return err
	}
	return d.Run(ctx)
}
