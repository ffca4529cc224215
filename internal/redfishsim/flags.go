package redfishsim

import (
	"flag"
	"fmt"
	"strings"
)

// RegisterFlags defines the fault flags on fs, filling f when fs is parsed:
// -latency, -hang, -error-rate, -power-delay, -ignore-graceful,
// -omit-allowable-values and the comma-separated pattern lists
// -error-paths, -garbage-paths and -missing-paths. Binaries that run
// simulators (redfishsim, hms sim) share them; call Validate after parsing.
func (f *Faults) RegisterFlags(fs *flag.FlagSet) {
	fs.DurationVar(&f.Latency, "latency", 0, "added latency per request, e.g. 200ms")
	fs.BoolVar(&f.Hang, "hang", false, "never answer (until the client gives up)")
	fs.Float64Var(&f.ErrorRate, "error-rate", 0, "fraction 0..1 of requests answered 500")
	fs.Func("error-paths", "comma-separated path `PATTERNS` answered 500 (\"*\" matches one segment)", pathList(&f.ErrorPaths))
	fs.Func("garbage-paths", "comma-separated path `PATTERNS` answered with a non-JSON body", pathList(&f.GarbagePaths))
	fs.DurationVar(&f.PowerDelay, "power-delay", 0, "time a system reset takes to change PowerState, e.g. 2s")
	fs.BoolVar(&f.IgnoreGraceful, "ignore-graceful", false, "accept GracefulShutdown/GracefulRestart and do nothing")
	fs.BoolVar(&f.OmitAllowableValues, "omit-allowable-values", false, "leave ResetType@Redfish.AllowableValues out of resources")
	fs.Func("missing-paths", "comma-separated path `PATTERNS` answered 404", pathList(&f.MissingPaths))
}

// pathList parses a comma-separated list of path patterns into *dst.
func pathList(dst *[]string) func(string) error {
	return func(s string) error {
		*dst = nil
		for p := range strings.SplitSeq(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				if !strings.HasPrefix(p, "/") {
					return fmt.Errorf("path %q does not start with /", p)
				}
				*dst = append(*dst, p)
			}
		}
		return nil
	}
}
