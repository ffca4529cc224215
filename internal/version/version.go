// Package version says which build of the suite a binary is: the version the
// build stamped into it, or else what the Go toolchain recorded of the module
// and the VCS checkout it was built from.
package version

import (
	"runtime/debug"
	"strings"
)

// stamped is set by the build, and only by it:
//
//	go build -ldflags "-X github.com/hmsuite/hms/internal/version.stamped=v0.3.0" ./cmd/...
//
// It is a package variable because -X can set nothing else; nothing at run
// time writes it.
var stamped string

// String is the version of this binary: the stamped one, else the module
// version of a `go install module@version` build, else the VCS revision
// (with "+dirty" for uncommitted changes), else "devel".
func String() string {
	bi, _ := debug.ReadBuildInfo()
	return resolve(stamped, bi)
}

func resolve(stamp string, bi *debug.BuildInfo) string {
	if stamp != "" {
		return stamp
	}
	if bi == nil {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, when string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	out := "devel-" + rev[:min(12, len(rev))]
	if dirty {
		out += "+dirty"
	}
	if when != "" {
		out += " (" + strings.TrimSuffix(when, "Z") + "Z)"
	}
	return out
}
