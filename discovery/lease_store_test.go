package discovery

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/ipxe/lease"
)

// TestLeasesSurviveRestart: the leases reds saw are kept in its database,
// a batch of lease events in one commit, so after a restart on the same
// database the discovery token still obtains credentials for a MAC whose
// lease stands (bss publishes no event for its renewals), and not for one
// whose lease ended before the restart.
func TestLeasesSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "reds.db"), CredKeyFile: filepath.Join(dir, "key"),
		SLSURL: "http://127.0.0.1:1", HSMURL: "http://127.0.0.1:1", TokenFile: filepath.Join(dir, "token")}
	if err := os.WriteFile(cfg.TokenFile, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const (
		stands = "a4:bf:01:3a:00:01"
		ended  = "a4:bf:01:3a:00:02"
		moved  = "a4:bf:01:3a:00:03"
	)
	var msgs []bus.Message
	for _, ev := range []lease.Event{
		{Kind: lease.Commit, MACAddress: stands, IPAddress: "10.254.3.1"},
		{Kind: lease.Commit, MACAddress: ended, IPAddress: "10.254.3.2"},
		{Kind: lease.Commit, MACAddress: moved, IPAddress: "10.254.3.3"},
		{Kind: lease.Expire, MACAddress: ended, IPAddress: "10.254.3.2"},
		{Kind: lease.Commit, MACAddress: moved, IPAddress: "10.254.3.4"},
	} {
		b, err := lease.Encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, bus.Message{Value: b})
	}
	first, err := StartDaemon(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	commits := first.store.db.Commits()
	if err := first.svc.handleLeases(t.Context(), msgs); err != nil {
		t.Fatal(err)
	}
	if n := first.store.db.Commits() - commits; n != 1 {
		t.Errorf("%d commits for a batch of lease events, want 1", n)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- first.Run(ctx) }()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	url, _ := runDaemon(t, cfg)
	for _, tt := range []struct {
		name, method, path, mac, ip string
		want                        int
	}{
		{name: "lease stands", method: "POST", path: "/v1/credentials", mac: stands, ip: "10.254.3.1", want: 200},
		{name: "lease ended", method: "POST", path: "/v1/credentials", mac: ended, ip: "10.254.3.2", want: 403},
		{name: "old address", method: "PUT", path: "/v1/discovery", mac: moved, ip: "10.254.3.3", want: 403},
		{name: "new address", method: "PUT", path: "/v1/discovery", mac: moved, ip: "10.254.3.4", want: 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"addresses":[{"macAddress":"` + strings.ReplaceAll(tt.mac, ":", "") +
				`","IPAddresses":[{"addressType":"IPv4","address":"` + tt.ip + `"}]}]}`
			if code, got := call(t, tt.method, url+tt.path, "Bearer "+testToken, body); code != tt.want {
				t.Errorf("%s %s: %d %s; want %d", tt.method, tt.path, code, got, tt.want)
			}
		})
	}
}
