package inventory

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// FuzzRedfishEndpointInput feeds untrusted POST bodies and query strings to
// the endpoint validation: it must not panic, and what it accepts must be
// stable (normalising twice changes nothing) and reachable.
func FuzzRedfishEndpointInput(f *testing.F) {
	f.Add(`{"ID":"x3000c0s1b0","FQDN":"10.1.2.3:8443","MACAddr":"AA-BB-CC-DD-EE-01"}`, "id=x3000c0s1b0&type=NodeBMC")
	f.Add(`{"ID":"x3000c0r1b0","Hostname":"sw1","Domain":"hmn","IPAddress":"[fe80::1]:443"}`, "laststatus=DiscoverOK")
	f.Add(`{"ID":"x1c0s0b0","FQDN":"a b"}`, "color=red")
	f.Fuzz(func(t *testing.T, body, query string) {
		if q, err := url.ParseQuery(query); err == nil {
			_, _ = parseRedfishEndpointFilter(q)
		}
		var ep hsm.RedfishEndpoint
		if json.Unmarshal([]byte(body), &ep) != nil {
			return
		}
		if err := normEndpoint("", &ep); err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error %q", err)
			}
			return
		}
		again := ep
		if err := normEndpoint("", &again); err != nil {
			t.Fatalf("normalised endpoint rejected on a second pass: %v (%+v)", err, ep)
		}
		if again.FQDN != ep.FQDN || again.Hostname != ep.Hostname || again.MACAddr != ep.MACAddr || again.Type != ep.Type {
			t.Errorf("not stable: %+v then %+v", ep, again)
		}
		if ep.FQDN == "" && ep.IPAddress == "" {
			t.Errorf("accepted endpoint with no address: %+v", ep)
		}
	})
}
