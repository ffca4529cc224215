package fleetproc

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/redfishsim"
)

// TestChild is not a test: it is the child process TestStart runs
// (HMS_FLEETPROC_TEST=<first>,<count>).
func TestChild(t *testing.T) {
	spec := os.Getenv("HMS_FLEETPROC_TEST")
	if spec == "" {
		t.Skip("child process of TestStart")
	}
	first, count, _ := strings.Cut(spec, ",")
	f, _ := strconv.Atoi(first)
	n, _ := strconv.Atoi(count)
	fleet, err := redfishsim.NewFleet(Config(f, n, "secret-1"))
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
	_, out := Start(t, "^TestChild$", "HMS_FLEETPROC_TEST=5,3")
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
