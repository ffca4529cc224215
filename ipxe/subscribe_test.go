package ipxe

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// startBSS runs another BSS on HSM at hsmURL, with SCNs to scnIn (empty:
// its own URL), until the test ends, and waits until HSM holds its
// subscription.
func startBSS(t *testing.T, hsmURL, scnIn string) *Daemon {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	bss, err := StartDaemon(ctx, DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "bss.db"),
		HSMURL: hsmURL, AdvertiseURL: "http://bss", ScnInURL: scnIn, Resync: time.Hour})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = bss.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-bss.Service().Subscribed():
	case <-time.After(10 * time.Second):
		t.Fatal("BSS did not subscribe to HSM")
	}
	return bss
}

// bssSubscriptions returns HSM's subscriptions of BSS (bss@host).
func bssSubscriptions(t *testing.T, hc *client.Client) []hsm.Subscription {
	t.Helper()
	subs, err := hc.Subscriptions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []hsm.Subscription
	for _, s := range subs {
		if strings.HasPrefix(s.Subscriber, "bss@") {
			out = append(out, s)
		}
	}
	return out
}

// TestRestartedBSSKeepsItsSubscription: a BSS restarted on the same
// callback URL finds HSM already holding its subscription (409) and takes
// it as held; one restarted on another port has HSM move the same
// subscription to its new URL. Either way HSM holds one subscription of BSS.
func TestRestartedBSSKeepsItsSubscription(t *testing.T) {
	hc, first := withHSM(t)
	before := bssSubscriptions(t, hc)
	if len(before) != 1 || !strings.HasPrefix(before[0].Url, first.URL()) {
		t.Fatalf("subscriptions of BSS = %+v, want one to %s", before, first.URL())
	}

	startBSS(t, hc.URL(), before[0].Url)
	if got := bssSubscriptions(t, hc); len(got) != 1 || got[0].ID != before[0].ID || got[0].Url != before[0].Url {
		t.Errorf("after a restart on the same URL: %+v, want %+v alone", got, before[0])
	}

	moved := startBSS(t, hc.URL(), "")
	got := bssSubscriptions(t, hc)
	if len(got) != 1 || got[0].ID != before[0].ID || !strings.HasPrefix(got[0].Url, moved.URL()) {
		t.Errorf("after a restart on another port: %+v, want subscription %d to %s", got, before[0].ID, moved.URL())
	}
}
