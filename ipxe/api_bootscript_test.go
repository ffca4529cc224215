package ipxe

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// scriptQueryCases are queries iPXE sends and the corner cases of
// url.ParseQuery that parseScriptQuery must read the same way or leave
// to it.
var scriptQueryCases = []string{
	"", "mac=aa:bb:cc:00:00:01", "mac=aa:bb:cc:00:00:01&retry=2", "nid=0x10&retry=9",
	"mac=,,,&nid=-1", "mac=,b,c&mac=d", "mac=&mac=x", "ts=1&arch=", "arch=&arch=x86_64&ts=&ts=5",
	"retry=1&retry=2", "name=%00&arch=x", "mac=a+b", "mac=a;b", "mac", "&&mac=a&&", "=x&mac==y",
	"MAC=a&mac=b", "name=x1&name=x2&nid=3,4", "mac=a&b&c&d&e&f&g&h&i&j&k&l&m&n&o&p&q&r",
}

// TestParseScriptQuery: the fast parse gives what url.ParseQuery gives, or
// declines.
func TestParseScriptQuery(t *testing.T) {
	for _, raw := range scriptQueryCases {
		checkScriptQuery(t, raw)
	}
}

func FuzzParseScriptQuery(f *testing.F) {
	for _, raw := range scriptQueryCases {
		f.Add(raw)
	}
	f.Fuzz(checkScriptQuery)
}

func checkScriptQuery(t *testing.T, raw string) {
	t.Helper()
	got, ok := parseScriptQuery(raw)
	if !ok {
		return
	}
	vals, _ := url.ParseQuery(raw)
	want := scriptQueryOf(vals)
	if d := cmp.Diff(want, got, cmp.AllowUnexported(scriptQuery{})); d != "" {
		t.Errorf("parseScriptQuery(%q) (-url.ParseQuery +fast):\n%s", raw, d)
	}
}
