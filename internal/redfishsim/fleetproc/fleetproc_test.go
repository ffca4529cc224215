package fleetproc

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/redfishsim"
)

// TestChild is not a test: it is the child process TestStart runs
// (HMS_FLEETPROC_TEST=<first>,<count>).
func TestChild(t *testing.T) {
	spec := Child(t, "HMS_FLEETPROC_TEST", 0)
	fleet, err := redfishsim.NewFleet(Config(spec.First, spec.Count, "secret-1"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := StdinContext()
	if err := Announce(os.Stdout, fleet); err != nil {
		t.Fatal(err)
	}
	_ = fleet.Run(ctx)
	os.Exit(0)
}

// TestStart: a child serves a fleet, announces its BMCs by xname, and
// answers Redfish until the test ends (its stdin closes then).
func TestStart(t *testing.T) {
	_, out := Start(t, "^TestChild$", "HMS_FLEETPROC_TEST="+Spec{First: 5, Count: 3}.String())
	addrs := map[string]string{}
	ReadAddrs(out, addrs)
	if len(addrs) != 3 {
		t.Fatalf("announced %v, want 3 BMCs", addrs)
	}
	for i := 5; i < 8; i++ {
		x := redfishsim.DefaultXname(i)
		addr, ok := addrs[x]
		if !ok {
			t.Fatalf("%s not announced: %v", x, addrs)
		}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+"/redfish/v1/Systems", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("root", "secret-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s at %s: GET Systems %d", x, addr, resp.StatusCode)
		}
	}
}

// TestParseSpec: a spec reads back as it was written, with exactly the
// fields its child expects; anything else is refused.
func TestParseSpec(t *testing.T) {
	s := Spec{First: 2500, Count: 2500, Args: []string{"http://127.0.0.1:1/boot", "1.5s"}}
	got, err := ParseSpec(s.String(), 2)
	if err != nil || got.First != 2500 || got.Count != 2500 || strings.Join(got.Args, " ") != "http://127.0.0.1:1/boot 1.5s" {
		t.Errorf("ParseSpec(%q) = %+v, %v", s, got, err)
	}
	for _, bad := range []string{"", "1", "1,2", "1,2,3,4", "x,2,3", "1,-2,3"} {
		if _, err := ParseSpec(bad, 1); err == nil {
			t.Errorf("ParseSpec(%q, 1) succeeded", bad)
		}
	}
}
