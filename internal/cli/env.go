package cli

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// warnUnknownEnv writes one warning line per HMS_* variable that no flag of
// this set reads although it looks meant for it: it is in the scope of one of
// the set's binaries (HMS_HSM_DISCOVERY_WORKER for hsm), or it is one or two
// letters away from a flag's twin (HMS_HBDT_ERRTIME). Variables of other
// binaries are left alone: one environment file often serves several daemons.
func (f *FlagSet) warnUnknownEnv() {
	environ, w := f.Environ, f.Stderr
	if environ == nil {
		environ = os.Environ
	}
	if w == nil {
		w = os.Stderr
	}
	known := map[string]bool{}
	var twins []string
	for _, e := range f.env {
		known[e] = true
		twins = append(twins, e)
	}
	sort.Strings(twins)
	for _, kv := range environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "HMS_") || known[name] || f.getenv(name) == "" {
			continue
		}
		hint := nearest(name, twins)
		for _, sc := range f.scopes {
			// HMS_UP_HSM_LISTEN for HMS_HSM_LISTEN: the twin of a Sub set's flag
			// is the daemon's own.
			if rest, ok := strings.CutPrefix(name, "HMS_"+envPart(sc)+"_"); ok && known["HMS_"+rest] {
				hint = "HMS_" + rest
			}
		}
		if hint != "" {
			fmt.Fprintf(w, "%s: warning: environment variable %s is not read by any flag (did you mean %s?)\n", f.Program, name, hint)
			continue
		}
		for _, s := range f.scopes {
			if strings.HasPrefix(name, "HMS_"+envPart(s)+"_") {
				fmt.Fprintf(w, "%s: warning: environment variable %s is not read by any flag (see %s -help)\n", f.Program, name, f.Program)
				break
			}
		}
	}
}

// nearest is the twin at most two edits from name, or "".
func nearest(name string, twins []string) string {
	best, bestD := "", 3
	for _, t := range twins {
		if d := editDistance(name, t, bestD); d < bestD {
			best, bestD = t, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, or limit when it is at
// least limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c = 1 + min(prev[j-1], prev[j], cur[j-1])
			}
			cur[j] = c
			rowMin = min(rowMin, c)
		}
		if rowMin >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}
