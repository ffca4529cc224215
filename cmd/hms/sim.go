package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/sim"
)

const simUsage = `Usage:
  hms sim [flags]                      simulate -nodes River node BMCs, switches and nodes, and -mountain cabinets, against a running suite
  hms sim list                         list the simulated BMCs and nodes (phase, addresses, stage times)
  hms sim add [-layout] XNAME...       add BMCs (x3000c0s1b0 or x3000c0s1b0n0; Mountain x1000c0s0b1, x1000c0b0), nodes powered on
  hms sim remove XNAME...              power off and take out nodes and their BMCs
  hms sim power on|off XNAME...        press the power button of nodes' BMCs
  hms sim kill-bmc XNAME...            make BMCs stop answering
The commands other than the first talk to the running sim's control API (-control).
hms sim -help lists the flags of the first; docs/sim.md tells how to run hms up for it.
`

// simCmd is `hms sim`: run the simulation, or drive a running one.
func simCmd(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return simControl(ctx, args, getenv, stdout)
	}
	f := cli.NewFlagSet("sim", getenv, stdout)
	f.Program = "hms sim"
	nodes := f.Int("nodes", 16, "number of node BMCs (one node each) to simulate, 128 per River cabinet")
	river := f.Int("river", 0, "number of River cabinets to fill (128 nodes each; overrides -nodes when given)")
	mountain := f.Int("mountain", 0, "number of Mountain cabinets from x1000, found by reds' MEDS role: chassis controllers and node cards, no switch")
	mtnChassis := f.Int("mountain-chassis", sim.MountainChassis, "chassis per Mountain cabinet (1-8), each with its chassis controller x#c#b0")
	mtnSlots := f.Int("mountain-slots", sim.MountainSlots, "filled blade slots per Mountain chassis (0-8), two node cards (one node each) per blade")
	suite := f.String("suite", "127.0.0.1", "where the suite runs: a `HOST` (daemons at their default ports), and/or comma-separated sls=URL, bss=URL, hbtd=URL for daemons elsewhere; -sls-url, -bss-url and -hbtd-url override")
	slsURL := f.String("sls-url", "", "SLS base `URL` (default http://<suite>:8376)")
	bssURL := f.String("bss-url", "", "bss base `URL` (default http://<suite>:27778)")
	hbtdURL := f.String("hbtd-url", "", "hbtd base `URL` (default http://<suite>:28500)")
	dhcp := f.String("dhcp-server", "127.0.0.1:6767", "the suite's DHCP server `HOST:PORT` (hms up -bss-dhcp-listen)")
	relay := f.String("relay", "127.20.0.1:6768", "the simulated relay `GIADDR:PORT` the DHCP server replies to (hms up -bss-dhcp-relay-port; giaddr in a relayed -bss-dhcp-config subnet)")
	bmcPort := f.Int("bmc-port", 8443, "HTTPS `PORT` of every BMC at its lease address (hms up -reds-bmc-port)")
	snmpPort := f.Int("snmp-port", 1161, "UDP `PORT` of the simulated switches (127.21.<cabinet>.<chassis+1>)")
	control := f.String("control", "127.0.0.1:27790", "`HOST:PORT` of the control API")
	off := f.Bool("powered-off", false, "start the nodes powered off (they boot on a Redfish reset On: pcs, or hms sim power on)")
	kernel := f.String("kernel", "http://127.0.0.1/sim/vmlinuz", "kernel `URL` of the Default boot entry created in bss when it has none")
	retry := f.Duration("boot-retry", time.Second, "first wait before a node asks bss again for a script that does not name it yet (it doubles, up to four times this)")
	beat := f.Duration("heartbeat-interval", 10*time.Second, "the nodes' heartbeat interval")
	snmpFlags := registerSimSNMP(f)
	level := f.LogLevel()
	tf := token.Register(f) // the sim's own calls when the suite checks tokens; its nodes use bss's node tokens
	if err := f.ParseOrUsage(args); err != nil {
		return err
	}
	tok, err := tf.ConfigOrEnv(getenv)
	if err != nil {
		return err
	}
	switch {
	case f.IsSet("river"):
		*nodes = *river * sim.NodesPerCabinet
	case f.IsSet("mountain") && !f.IsSet("nodes"):
		*nodes = 0 // -mountain alone simulates Mountain cabinets only
	}
	if *nodes < 0 || *nodes > 64*sim.NodesPerCabinet {
		return cli.Usagef("-nodes %d: want 0 to %d", *nodes, 64*sim.NodesPerCabinet)
	}
	mtn := sim.Mountain{Cabinets: *mountain, Chassis: *mtnChassis, Slots: *mtnSlots}
	if err := mtn.Validate(); err != nil {
		return cli.Usagef("-mountain: %v", err)
	}
	for _, a := range []struct{ name, v string }{{"dhcp-server", *dhcp}, {"relay", *relay}, {"control", *control}} {
		if ap, err := netip.ParseAddrPort(a.v); err != nil || !ap.Addr().IsLoopback() {
			return cli.Usagef("-%s %s: want a loopback IPv4:PORT (the sim sends nothing off this host)", a.name, a.v)
		}
	}
	if *retry <= 0 || *beat <= 0 {
		return cli.Usagef("-boot-retry and -heartbeat-interval must be positive")
	}
	snmpUser, err := snmpFlags.v3User(f)
	if err != nil {
		return err
	}
	host, suiteURLs, err := parseSuite(*suite)
	if err != nil {
		return err
	}
	orDefault := func(u *string, name string, port int) string {
		if *u != "" {
			return strings.TrimRight(*u, "/")
		}
		if v, ok := suiteURLs[name]; ok {
			return v
		}
		return fmt.Sprintf("http://%s:%d", host, port)
	}
	s, err := sim.New(sim.Config{Nodes: *nodes, Mountain: mtn, SLSURL: orDefault(slsURL, "sls", 8376), BSSURL: orDefault(bssURL, "bss", 27778),
		HBTDURL: orDefault(hbtdURL, "hbtd", 28500), DHCPServer: *dhcp, Relay: *relay, BMCPort: *bmcPort, SNMPPort: *snmpPort, SNMPUser: snmpUser,
		Control: *control, PoweredOff: *off, Kernel: *kernel, BootRetry: *retry, HeartbeatInterval: *beat, Token: tok,
		Log: cli.NewLogger(io.Discard, *level).With("daemon", "sim")})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sim    %s (%d River nodes, %d Mountain cabinets, %s)\n", s.ControlURL(), *nodes, *mountain, describeSNMP(snmpUser))
	if err := s.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// simControl runs a command against a running sim's control API.
func simControl(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cmd, rest := args[0], args[1:]
	route := cmd
	if cmd == "power" {
		if len(rest) == 0 || (rest[0] != "on" && rest[0] != "off") {
			return cli.Usagef("hms sim power on|off XNAME...")
		}
		route, rest = "power/"+rest[0], rest[1:]
	}
	f := cli.NewFlagSet("sim", getenv, stdout)
	f.Program = "hms sim " + cmd
	control := f.String("control", "127.0.0.1:27790", "`HOST:PORT` of the running sim's control API")
	withLayout := f.Bool("layout", false, "add: also write the new hardware to SLS")
	flags, xnames := splitArgs(rest)
	if err := f.ParseOrUsage(flags); err != nil {
		return err
	}
	c := sim.NewClient("http://"+*control, nil)
	switch cmd {
	case "help":
		fmt.Fprint(stdout, simUsage)
		return nil
	case "list":
		ds, err := c.Devices(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-16s %-6s %-5s %-11s %-21s %s\n", "NODE", "NID", "POWER", "PHASE", "BMC", "NODE ADDR")
		for _, d := range ds {
			fmt.Fprintf(stdout, "%-16s %-6d %-5s %-11s %-21s %s\n", cmp.Or(d.Node, d.BMC), d.NID, d.Power, d.Phase, d.BMCAddr, d.NodeAddr)
		}
		return nil
	case "add", "remove", "power", "kill-bmc":
		if len(xnames) == 0 {
			return cli.Usagef("hms sim %s: at least one XNAME", cmd)
		}
		return c.Do(ctx, route, sim.Request{XNames: xnames, Layout: *withLayout})
	default:
		return cli.Usagef("hms sim: unknown command %q\n%s", cmd, simUsage)
	}
}

// splitArgs separates the flags of a control command from its xnames, which
// may come in any order (cli.FlagSet takes flags only).
func splitArgs(args []string) (flags, xnames []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-control" || a == "--control") && i+1 < len(args):
			flags = append(flags, a, args[i+1])
			i++
		case strings.HasPrefix(a, "-"):
			flags = append(flags, a)
		default:
			xnames = append(xnames, a)
		}
	}
	return flags, xnames
}

// parseSuite reads -suite: comma-separated items, each a HOST (the
// daemons not named are there at their default ports; one at most) or
// DAEMON=URL for sls, bss or hbtd.
func parseSuite(v string) (host string, urls map[string]string, err error) {
	host, urls = "127.0.0.1", map[string]string{}
	hosts := 0
	for item := range strings.SplitSeq(v, ",") {
		item = strings.TrimSpace(item)
		name, u, isURL := strings.Cut(item, "=")
		switch {
		case item == "":
			continue
		case !isURL:
			if strings.ContainsAny(item, "/:") && !strings.HasPrefix(item, "[") {
				return "", nil, cli.Usagef("-suite %q: want a HOST or DAEMON=URL", item)
			}
			host, hosts = item, hosts+1
		case name != "sls" && name != "bss" && name != "hbtd":
			return "", nil, cli.Usagef("-suite %q: the sim talks to sls, bss and hbtd only", item)
		default:
			pu, perr := url.Parse(u)
			if perr != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
				return "", nil, cli.Usagef("-suite %s: %q is not an http(s)://HOST[:PORT] URL", name, u)
			}
			urls[name] = strings.TrimRight(u, "/")
		}
	}
	if hosts > 1 {
		return "", nil, cli.Usagef("-suite %q: one HOST at most", v)
	}
	return host, urls, nil
}
