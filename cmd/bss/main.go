// Command bss is the Boot Script Service: boot parameters per node, role or
// tag, the iPXE script each booting node fetches, and its cloud-init data,
// behind the HMS BSS REST API on /boot/v1.
package main

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/ipxe"
)

func main() { cli.Main("bss", run) }

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	f := cli.NewFlagSet("bss", getenv, stdout)
	listen, dbPath, level := f.Listen(":27778"), f.DB("./bss.db"), f.LogLevel()
	hsmURL := f.URL("hsm-url", "", "HSM base `URL`; its nodes, MACs, IPs and roles are cached and kept fresh by SCNs")
	advertise := f.URL("advertise-url", "", "base `URL` nodes reach bss on, put into chain URLs and ds= (default this daemon's URL)")
	inURL := f.URL("scn-in-url", "", "`URL` HSM posts SCNs to (default http://<hostname>:<port>/boot/v1/scn, loopback when HSM is)")
	resync := f.Duration("hsm-resync", 5*time.Minute, "re-read all of HSM every `DURATION` (SCNs keep the cache fresh in between)")
	retry := f.Duration("retry-delay", 30*time.Second, "sleep before a failed boot chains back (`DURATION`, whole seconds)")
	retrieval := f.Duration("retrieval-delay", 10*time.Second, "sleep before an unknown node chains back with its architecture (`DURATION`)")
	if err := f.ParseOrUsage(args); err != nil {
		return err
	}
	if *resync <= 0 || *retry < time.Second || *retrieval < time.Second {
		return &cli.UsageError{Err: errors.New("-hsm-resync must be positive; -retry-delay and -retrieval-delay at least 1s")}
	}
	d, err := ipxe.StartDaemon(ctx, ipxe.DaemonConfig{Listen: *listen, DB: *dbPath, HSMURL: *hsmURL,
		AdvertiseURL: *advertise, ScnInURL: *inURL, Resync: *resync, RetryDelay: *retry, RetrievalDelay: *retrieval,
		Log: cli.NewLogger(os.Stderr, *level)})
	if err != nil {
		return err
	}
	return d.Run(ctx)
}
