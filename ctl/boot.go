package ctl

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/ipxe/bss"
)

func defineBootSet(fs *flag.FlagSet) execFunc {
	hosts := fs.String("hosts", "", "`XNAMES` (comma-separated) the entry is for; also tags such as Default or Unknown-x86_64")
	roles := fs.String("roles", "", "HSM `ROLES` (Compute, Application, ...) whose nodes boot this unless they have an entry of their own")
	macs := fs.String("macs", "", "`MACS` the entry is for")
	nids := fs.String("nids", "", "`NIDS` the entry is for")
	kernel := fs.String("kernel", "", "kernel image `URL`")
	initrd := fs.String("initrd", "", "initrd image `URL`")
	params := fs.String("params", "", "kernel command line `PARAMS`")
	return func(ctx context.Context, s *session, _ []string) error {
		bp := bss.BootParams{Hosts: append(cli.SplitList(*hosts), cli.SplitList(*roles)...), MACs: cli.SplitList(*macs),
			Kernel: *kernel, Initrd: *initrd, Params: *params}
		for _, n := range cli.SplitList(*nids) {
			v, err := strconv.ParseInt(n, 10, 32)
			if err != nil || v < 0 {
				return usagef("boot set: -nids: %q is not a NID", n)
			}
			bp.NIDs = append(bp.NIDs, int32(v))
		}
		if len(bp.Hosts)+len(bp.MACs)+len(bp.NIDs) == 0 {
			return usagef("boot set: say whom it is for: -hosts, -roles, -macs or -nids")
		}
		if bp.Kernel == "" && bp.Initrd == "" && bp.Params == "" {
			return usagef("boot set: say what they boot: -kernel, -initrd or -params")
		}
		if err := s.bss().PutBootParams(ctx, bp); err != nil {
			return err
		}
		var whom []string
		for _, w := range [][]string{bp.Hosts, bp.MACs, cli.SplitList(*nids)} {
			whom = append(whom, w...)
		}
		fmt.Fprintf(s.Stdout, "boot parameters set for %s\n", strings.Join(whom, ", "))
		return nil
	}
}
