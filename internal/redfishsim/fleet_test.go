package redfishsim

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"
)

// runFleet starts a fleet and stops it when the test ends, checking that Run
// returns cleanly.
func runFleet(t testing.TB, cfg FleetConfig) *Fleet {
	t.Helper()
	f, err := NewFleet(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("fleet Run: %v", err)
		}
	})
	return f
}

// TestGofish drives the simulator with the client HSM uses, over HTTPS with
// verification off, with session and with Basic authentication.
func TestGofish(t *testing.T) {
	tlsConf, err := NewTLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	rack := mockup(t, "public-rackmount1")
	tests := []struct {
		name       string
		tree       *Tree
		user       string
		basic      bool
		wantIDs    []string
		resetID    string
		wantMACsOf int // EthernetInterfaces of the first system
	}{
		{name: "generated, session", tree: Template(2), user: testUser, wantIDs: []string{"Node0", "Node1"}, resetID: "Node1", wantMACsOf: 2},
		{name: "generated, basic", tree: Template(1), user: testUser, basic: true, wantIDs: []string{"Node0"}, resetID: "Node0", wantMACsOf: 2},
		{name: "rackmount1, session", tree: rack, user: "Administrator", wantIDs: []string{"437XR1138R2"}, resetID: "437XR1138R2", wantMACsOf: 4},
		{name: "bladed, session, no NICs", tree: mockup(t, "public-bladed"), user: "Administrator",
			wantIDs: []string{"529QB9450R6", "529QB9451R6", "529QB9452R6", "529QB9453R6"}, resetID: "529QB9452R6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := runFleet(t, FleetConfig{Count: 2, Listen: "127.0.0.1:0", Tree: tt.tree, User: tt.user, Password: testPass, TLS: tlsConf})
			m := f.Members()[1]
			c, err := gofish.ConnectContext(t.Context(), gofish.ClientConfig{
				Endpoint: m.URL, Username: tt.user, Password: testPass, Insecure: true, BasicAuth: tt.basic,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Logout()
			systems, err := c.Service.Systems()
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			var target *schemas.ComputerSystem
			for _, s := range systems {
				ids = append(ids, s.ID)
				if s.ID == tt.resetID {
					target = s
				}
			}
			if diff := cmp.Diff(tt.wantIDs, ids); diff != "" {
				t.Fatalf("systems (-want +got):\n%s", diff)
			}
			nics, err := systems[0].EthernetInterfaces()
			if err != nil || len(nics) != tt.wantMACsOf || (len(nics) > 0 && nics[0].MACAddress == "") {
				t.Fatalf("EthernetInterfaces: %d (%v), want %d with MACs", len(nics), err, tt.wantMACsOf)
			}
			if _, err := target.Reset(schemas.ForceOffResetType); err != nil {
				t.Fatalf("reset: %v", err)
			}
			after, err := schemas.GetObject[schemas.ComputerSystem](c, target.ODataID)
			if err != nil {
				t.Fatal(err)
			}
			if after.PowerState != schemas.OffPowerState {
				t.Errorf("PowerState after ForceOff = %s, want Off", after.PowerState)
			}
			other := f.Members()[0].BMC
			if body, _, _ := other.lookup(target.ODataID); !containsJSON(body, `"PowerState":"On"`) {
				t.Errorf("the reset reached another BMC of the fleet")
			}
		})
	}
}

func TestGofishWrongPassword(t *testing.T) {
	tlsConf, err := NewTLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	f := runFleet(t, FleetConfig{Count: 1, Listen: "127.0.0.1:0", Tree: Template(1), User: testUser, Password: testPass, TLS: tlsConf})
	_, err = gofish.ConnectContext(t.Context(), gofish.ClientConfig{
		Endpoint: f.Members()[0].URL, Username: testUser, Password: "wrong", Insecure: true,
	})
	var rfErr *schemas.Error
	if !errors.As(err, &rfErr) || rfErr.HTTPReturnedStatusCode != http.StatusUnauthorized {
		t.Fatalf("connect with a wrong password: %v, want a 401 Redfish error", err)
	}
}

// TestFleetStopsWithHungRequest checks that stopping a fleet ends a request
// a hung BMC holds: the client sees its connection dropped, not an answer.
func TestFleetStopsWithHungRequest(t *testing.T) {
	f, err := NewFleet(FleetConfig{Count: 1, Listen: "127.0.0.1:0", Tree: Template(1), Faults: Faults{Hang: true}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	m := f.Members()[0]
	got := make(chan error, 1)
	go func() {
		resp, err := http.Get(m.URL + "/redfish/v1/")
		if err == nil {
			resp.Body.Close()
			err = errors.New("got an answer: " + resp.Status)
		}
		got <- err
	}()
	// The request is in the handler once the BMC has counted it; the hang
	// fault blocks there until the fleet stops.
	for m.BMC.Stats().Requests == 0 {
		runtime.Gosched()
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if err := <-got; err == nil || strings.Contains(err.Error(), "got an answer") {
		t.Errorf("hung request ended with %v, want a dropped connection", err)
	}
}
