package version

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	tests := []struct {
		name  string
		stamp string
		bi    *debug.BuildInfo
		want  string
	}{
		{name: "stamped wins", stamp: "v1.2.3", bi: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.1"}}, want: "v1.2.3"},
		{name: "no build info", want: "devel"},
		{name: "go install module@version", bi: &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, want: "v0.4.0"},
		{name: "checkout", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", "0123456789abcdef0123", "vcs.time", "2026-11-24T07:00:00Z", "vcs.modified", "true")},
			want: "devel-0123456789ab+dirty (2026-11-24T07:00:00Z)"},
		{name: "no vcs", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, want: "devel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resolve(tt.stamp, tt.bi); got != tt.want {
				t.Errorf("resolve = %q, want %q", got, tt.want)
			}
		})
	}
	if String() == "" {
		t.Error("String() is empty")
	}
}
