package ctl

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

func defineCompletion(*flag.FlagSet) execFunc {
	return func(_ context.Context, s *session, args []string) error {
		switch args[0] {
		case "bash":
			return writeBash(s.Stdout, s.Options)
		case "zsh":
			// zsh runs the bash function through bashcompinit, so the two
			// shells complete the same words.
			fmt.Fprint(s.Stdout, "#compdef hms\nautoload -U +X bashcompinit && bashcompinit\n")
			return writeBash(s.Stdout, s.Options)
		}
		return usagef("completion: %q: want bash or zsh", args[0])
	}
}

// writeBash writes a bash completion function for hms built from the
// command tree: command words, then each command's flags.
func writeBash(w io.Writer, o Options) error {
	cmds := commands()
	firstSet := map[string]bool{"help": true}
	for _, s := range o.Others {
		firstSet[s.Name] = true
	}
	seconds := map[string][]string{}
	for _, c := range cmds {
		words := strings.Fields(c.name)
		firstSet[words[0]] = true
		if len(words) > 1 {
			seconds[words[0]] = append(seconds[words[0]], words[1])
		}
	}
	var first, groups []string
	for k := range firstSet {
		first = append(first, k)
	}
	for k := range seconds {
		groups = append(groups, k)
	}
	sort.Strings(first)
	sort.Strings(groups)
	fmt.Fprintf(w, "# bash completion for hms: source <(hms completion bash)\n_hms() {\n")
	fmt.Fprintf(w, "  local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]} sub=${COMP_WORDS[2]} words=\n")
	fmt.Fprintf(w, "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n    words=%q\n", strings.Join(first, " "))
	fmt.Fprintf(w, "  elif [ \"$COMP_CWORD\" -eq 2 ] && [[ $cur != -* ]]; then\n    case $cmd in\n")
	for _, g := range groups {
		fmt.Fprintf(w, "      %s) words=%q ;;\n", g, strings.Join(seconds[g], " "))
	}
	fmt.Fprintf(w, "      completion) words=\"bash zsh\" ;;\n      help) words=%q ;;\n    esac\n", strings.Join(first, " "))
	fmt.Fprintf(w, "  else\n    case \"$cmd $sub\" in\n")
	for _, c := range cmds {
		pattern := fmt.Sprintf("%q", c.name)
		if !strings.Contains(c.name, " ") {
			pattern = fmt.Sprintf("%q*", c.name+" ")
		}
		fmt.Fprintf(w, "      %s) words=%q ;;\n", pattern, strings.Join(flagWords(c), " "))
	}
	fmt.Fprintf(w, "    esac\n  fi\n  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n}\ncomplete -o default -F _hms hms\n")
	return nil
}

// flagWords are the flags of c as typed (-state, -o, ...).
func flagWords(c command) []string {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	declareConnection(fs)
	if c.output {
		fs.String("o", "", "")
	}
	c.define(fs)
	var out []string
	fs.VisitAll(func(f *flag.Flag) { out = append(out, "-"+f.Name) })
	return out
}
