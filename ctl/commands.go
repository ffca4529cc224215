package ctl

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hmsuite/hms/internal/cli"
)

// A command is one leaf of the command tree ("status", "get nodes").
type command struct {
	name    string // one or two words
	args    string // what the positional arguments are, for help
	summary string
	// minArgs and maxArgs bound the positional arguments (maxArgs -1: any).
	minArgs, maxArgs int
	// output: the command prints data and takes -o.
	output bool
	// more is printed at the end of the command's help.
	more string
	// define declares the command's own flags on fs and returns what runs it.
	define func(fs *flag.FlagSet) execFunc
}

// execFunc runs a command with its parsed flags and positional arguments.
type execFunc func(ctx context.Context, s *session, args []string) error

// commands is the command tree, in the order help lists it.
func commands() []command {
	cmds := []command{
		{name: "status", summary: "the machine at a glance: daemons, nodes by state and role, BMCs, unknown MACs",
			maxArgs: 0, output: true, define: defineStatus},
		{name: "config", summary: "the URL of each daemon and where it comes from (flag, env, file, default)",
			maxArgs: 0, output: true, define: defineConfig, more: configHelp()},
	}
	cmds = append(cmds, getCommands()...)
	cmds = append(cmds,
		command{name: "describe node", args: "XNAME", summary: "one node: layout, state, endpoint, interfaces, boot parameters, heartbeat, last DHCP lease, boot script fetches",
			minArgs: 1, maxArgs: 1, output: true, define: defineDescribe},
		command{name: "layout load", args: "FILE", summary: "replace the whole SLS layout with a dump file (- for stdin)",
			minArgs: 1, maxArgs: 1, define: defineLayoutLoad},
		command{name: "boot set", summary: "create or replace BSS boot parameters for hosts, roles, MACs or NIDs",
			maxArgs: 0, define: defineBootSet},
		command{name: "node add", args: "XNAME...", summary: "add nodes and their BMC (and switch port) to the SLS layout",
			minArgs: 1, maxArgs: -1, define: defineNodeAdd},
		command{name: "node remove", args: "XNAME...", summary: "remove nodes from the SLS layout, with their BMC once it has no node left",
			minArgs: 1, maxArgs: -1, define: defineNodeRemove},
		command{name: "wait", args: "XNAME...", summary: "wait until every named component is in a state (default Ready) in HSM",
			minArgs: 1, maxArgs: -1, define: defineWait},
	)
	cmds = append(cmds, powerCommands()...)
	cmds = append(cmds, applyCommands()...)
	cmds = append(cmds, bosCommands()...)
	cmds = append(cmds, command{name: "completion", args: "bash|zsh", summary: "print a shell completion script (source <(hms completion bash))",
		minArgs: 1, maxArgs: 1, define: defineCompletion})
	return cmds
}

// usage writes the help of one command, from its flag set.
func (c command) usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: hms %s", c.name)
	if c.args != "" {
		fmt.Fprintf(w, " %s", c.args)
	}
	fmt.Fprintf(w, " [flags]\n\n%s.\n\nFlags:\n", strings.ToUpper(c.summary[:1])+c.summary[1:])
	var conn []string
	fs.VisitAll(func(f *flag.Flag) {
		if isConnectionFlag(f.Name) {
			conn = append(conn, "-"+f.Name)
			return
		}
		arg, text := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  -%s %s\n        %s", f.Name, arg, text)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			fmt.Fprintf(w, " (default %q)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
	fmt.Fprintf(w, "\nConnection flags (see hms help config): %s\n", strings.Join(conn, ", "))
	if c.more != "" {
		fmt.Fprintf(w, "\n%s", c.more)
	}
}

// help answers `hms help [COMMAND [SUB]]`.
func help(o Options, cmds []command, args []string) error {
	if len(args) > 1 {
		topic := args[1:]
		if g := below(cmds, topic); len(g) > 0 {
			fmt.Fprintf(o.Stdout, "Usage: hms %s <%s> [arguments] [flags]\n\nCommands:\n", strings.Join(topic, " "),
				strings.Join(nextWords(g, len(topic)), "|"))
			listCommands(o.Stdout, g)
			return cli.ErrHelp
		}
		c, _, err := find(cmds, topic)
		if err != nil {
			return err
		}
		return c.run(context.Background(), o, []string{"-help"})
	}
	fmt.Fprint(o.Stdout, "Usage: hms <command> [arguments] [flags]\n\nCommands:\n")
	others := append([]Summary(nil), o.Others...)
	sort.Slice(others, func(i, j int) bool { return others[i].Name < others[j].Name })
	for _, s := range others {
		fmt.Fprintf(o.Stdout, "  %-26s %s\n", s.Name, s.Text)
	}
	listCommands(o.Stdout, cmds)
	fmt.Fprint(o.Stdout, "\nhms help COMMAND (or hms COMMAND -help) shows its flags; hms help config says how the daemons' URLs are found.\n")
	return cli.ErrHelp
}

func listCommands(w io.Writer, cmds []command) {
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-26s %s\n", c.name, c.summary)
	}
}
