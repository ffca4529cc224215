package ipxe

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

// bssSubscriptions returns HSM's subscriptions of BSS (bss@...).
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
// it as held, as bss@<host:port> of its callback. A second BSS on the
// same host, on another port, holds a subscription of its own: neither
// takes the other's.
func TestRestartedBSSKeepsItsSubscription(t *testing.T) {
	hc, first := withHSM(t)
	before := bssSubscriptions(t, hc)
	name := "bss@" + strings.TrimPrefix(first.URL(), "http://")
	if len(before) != 1 || !strings.HasPrefix(before[0].Url, first.URL()) || before[0].Subscriber != name {
		t.Fatalf("subscriptions of BSS = %+v, want one of %s to %s", before, name, first.URL())
	}

	startBSS(t, hc.URL(), before[0].Url)
	if got := bssSubscriptions(t, hc); len(got) != 1 || !cmp.Equal(got[0], before[0]) {
		t.Errorf("after a restart on the same URL: %+v, want %+v alone", got, before[0])
	}

	second := startBSS(t, hc.URL(), "")
	got := map[string]string{}
	for _, s := range bssSubscriptions(t, hc) {
		got[s.Subscriber] = s.Url
	}
	want := map[string]string{name: before[0].Url,
		"bss@" + strings.TrimPrefix(second.URL(), "http://"): second.URL() + Base + "/scn"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("subscriptions with a second BSS on the host (-want +got):\n%s", d)
	}
}
