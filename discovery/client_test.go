package discovery

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/discovery/client"
	"github.com/hmsuite/hms/discovery/wire"
)

// TestClient: the typed client reads the real handler's /v1/unknown (the
// deferred MACs only when asked) and /v1/endpoints.
func TestClient(t *testing.T) {
	url, d := startDaemon(t, false)
	at := time.Date(2026, 11, 24, 21, 0, 0, 0, time.UTC)
	placed := wire.Unknown{MACAddress: "b4:2e:99:00:00:01", IPAddress: "10.254.1.7", Reason: wire.ReasonOnTwoPorts,
		Detail: "two ports", Switch: "x3000c0w14", Port: "7", Attempts: 2, LastAttempt: at, NextAttempt: at.Add(time.Minute)}
	deferred := wire.Unknown{MACAddress: "b4:2e:99:00:00:02", Reason: wire.ReasonNotOnAnySwitch, Attempts: 1,
		LastAttempt: at, NextAttempt: at.Add(time.Minute), Deferred: true}
	d.svc.mu.Lock()
	d.svc.unknown[placed.MACAddress], d.svc.unknown[deferred.MACAddress] = &placed, &deferred
	d.svc.mu.Unlock()

	c := client.New(url+"/v1", nil, "test")
	for _, tt := range []struct {
		deferred bool
		want     []wire.Unknown
	}{{false, []wire.Unknown{placed}}, {true, []wire.Unknown{placed, deferred}}} {
		got, err := c.Unknown(t.Context(), tt.deferred)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Unknown(deferred %v) (-want +got):\n%s", tt.deferred, diff)
		}
	}
	eps, err := c.Endpoints(t.Context(), "")
	if err != nil || eps == nil || len(eps) != 0 {
		t.Errorf("Endpoints = %#v, %v; want an empty list", eps, err)
	}
}
