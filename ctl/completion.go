package ctl

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
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
// command tree: the words typed so far select the next command word (or
// completion's shell, help's topic), else the flags of the command they
// name.
func writeBash(w io.Writer, o Options) error {
	cmds := commands()
	next := map[string][]string{} // words typed so far -> the words that may follow
	add := func(key, word string) {
		if !slices.Contains(next[key], word) {
			next[key] = append(next[key], word)
		}
	}
	add("", "help")
	for _, s := range o.Others {
		add("", s.Name)
		for _, phrase := range s.Words {
			words := append([]string{s.Name}, strings.Fields(phrase)...)
			for i := 1; i < len(words); i++ {
				add(strings.Join(words[:i], " "), words[i])
			}
		}
	}
	for _, c := range cmds {
		words := strings.Fields(c.name)
		for i, wd := range words {
			add(strings.Join(words[:i], " "), wd)
		}
	}
	next["completion"] = []string{"bash", "zsh"}
	next["help"] = next[""]
	keys := make([]string, 0, len(next))
	for k := range next {
		sort.Strings(next[k])
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(w, "# bash completion for hms: source <(hms completion bash)\n_hms() {\n")
	fmt.Fprintf(w, "  local cur=${COMP_WORDS[COMP_CWORD]} typed=\"${COMP_WORDS[*]:1:COMP_CWORD-1}\" words=\n")
	fmt.Fprintf(w, "  if [[ $cur != -* ]]; then\n    case \"$typed\" in\n")
	for _, k := range keys {
		fmt.Fprintf(w, "      %q) words=%q ;;\n", k, strings.Join(next[k], " "))
	}
	fmt.Fprintf(w, "    esac\n  fi\n  if [ -z \"$words\" ]; then\n    case \"$typed \" in\n")
	// Longer names first: "bos sessions create " before any shorter prefix.
	byLength := slices.Clone(cmds)
	slices.SortStableFunc(byLength, func(a, b command) int { return len(b.name) - len(a.name) })
	for _, c := range byLength {
		fmt.Fprintf(w, "      %q*) words=%q ;;\n", c.name+" ", strings.Join(flagWords(c), " "))
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
