// Command hbagent is the node-side heartbeat agent: it POSTs a heartbeat to
// hbtd every -interval for this node's xname (read from /etc/cray/xname when
// -xname is not given), or one batch for several xnames.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/mtls"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/orchestrator/report"
)

func main() { cli.Main("hbagent", run) }

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	f := cli.NewFlagSet("hbagent", getenv, stdout)
	url := f.URL("hbtd-url", "http://127.0.0.1:28500", "hbtd base `URL` (/hmi/v1 is appended)")
	names := f.String("xname", "", "comma-separated `XNAMES` to beat for (default: the content of -xname-file)")
	nameFile := f.String("xname-file", "/etc/cray/xname", "`FILE` holding this node's xname")
	interval := f.Seconds("interval", 3*time.Second, "`SECONDS` between heartbeats")
	level := f.LogLevel()
	tf := token.Register(f) // a node token whose sub is this node's xname, when hbtd checks tokens
	cmdline := f.String("token-cmdline", "/proc/cmdline", "`FILE` whose "+token.CmdlineParam+"= (put on the kernel command line by bss -node-token-key) is the token when neither -token, -token-file nor $"+token.Env+" gives one")
	bssURL := f.URL("bss-url", "", "bss base `URL`: renew the node token there (GET /boot/v1/node-token) once it is past half its life; empty: never renew")
	bosURL := f.URL("bos-url", "", "bos base `URL`: report the kernel command line in -token-cmdline's file as this node's booted state (PATCH /v2/components/XNAME) at start; empty: no report")
	tlsFlags := mtls.RegisterClient(f) // for an https:// hbtd, bss or bos, and a client certificate when they run with -client-ca
	if err := f.ParseOrUsage(args); err != nil {
		return err
	}
	tc, err := tlsFlags.Config()
	if err != nil {
		return err
	}
	tok, err := tf.ConfigOrEnv(getenv)
	if err != nil {
		return err
	}
	xnames, err := agentXnames(*names, *nameFile)
	if err != nil {
		return &cli.UsageError{Err: err}
	}
	if !tok.Set() {
		tok.Token = token.FromCmdline(*cmdline)
	}
	if *bssURL != "" && len(xnames) == 1 {
		tok.RenewURL = strings.TrimRight(*bssURL, "/") + "/boot/v1/node-token?name=" + xnames[0]
	}
	host, _ := os.Hostname()
	log := cli.NewLogger(os.Stderr, *level)
	// The token's renewals at bss go through the TLS client too.
	hc := tc.Client(nil)
	if *bosURL != "" && len(xnames) == 1 {
		go reportBoot(ctx, tok.Client(hc), *bosURL, xnames[0], *cmdline, log)
	}
	a := &agent.Agent{
		Client: agent.NewClient(*url, tok.Client(hc)), XNames: xnames, Hostname: host,
		Interval: *interval, Log: log,
	}
	return a.Run(ctx)
}

// reportBoot tells bos what this node booted (package report), retrying
// with backoff until bos takes it or ctx ends.
func reportBoot(ctx context.Context, hc *http.Client, bosURL, xname, cmdlineFile string, log *slog.Logger) {
	b, err := os.ReadFile(cmdlineFile)
	if err != nil {
		log.Warn("bos_report_skipped", "err", err)
		return
	}
	for wait := time.Second; ; wait = min(2*wait, time.Minute) {
		err := report.Send(ctx, hc, bosURL, xname, string(b))
		if err == nil {
			log.Info("bos_report_sent", "xname", xname)
			return
		}
		log.Warn("bos_report_failed", "err", err, "retry_in", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// agentXnames reads and validates the xnames from the flag or the file.
func agentXnames(list, file string) ([]string, error) {
	if list == "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("no -xname given and %w", err)
		}
		list = strings.TrimSpace(string(b))
	}
	var out []string
	for n := range strings.SplitSeq(list, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if !xname.Valid(n) {
			return nil, fmt.Errorf("-xname: %q is not a valid xname", n)
		}
		out = append(out, xname.Normalize(n))
	}
	if len(out) == 0 {
		return nil, errors.New("-xname: no xname given")
	}
	return out, nil
}
