package discovery

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/ipxe/lease"
)

// TestLeasesSurviveRestart: the leases reds saw are kept in its database,
// a batch of lease events in one commit, so after a restart on the same
// database the discovery token still obtains credentials for a MAC whose
// lease stands (bss publishes no event for its renewals), and not for one
// whose lease ended before the restart.
func TestLeasesSurviveRestart(t *testing.T) { pg.EachDB(t, testLeasesSurviveRestart) }

func testLeasesSurviveRestart(t *testing.T, db testpeer.DB) {
	dir := t.TempDir()
	cfg := DaemonConfig{Listen: "127.0.0.1:0", DB: db(t), CredKeyFile: filepath.Join(dir, "key"),
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

// TestLeasesSwept: a lease whose expire event reds missed (it was down, or
// the event was lost) no longer counts for the discovery token once it has
// been over for -lease-grace, and the sweep deletes it from the database,
// so a restarted reds does not take it back; a lease still running (or in
// its grace: a renewal sends no event) counts and is kept. The clock is
// injected: nothing waits.
func TestLeasesSwept(t *testing.T) { pg.EachDB(t, testLeasesSwept) }

func testLeasesSwept(t *testing.T, db testpeer.DB) {
	dir := t.TempDir()
	clock := newFakeClock()
	cfg := DaemonConfig{Listen: "127.0.0.1:0", DB: db(t), CredKeyFile: filepath.Join(dir, "key"),
		SLSURL: "http://127.0.0.1:1", HSMURL: "http://127.0.0.1:1", TokenFile: filepath.Join(dir, "token"),
		Service: Config{Now: clock.Now, LeaseGrace: time.Hour}}
	if err := os.WriteFile(cfg.TokenFile, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const (
		ended   = "a4:bf:01:3b:00:01" // 5 min lease, its expire event missed
		running = "a4:bf:01:3b:00:02" // 3 h lease
	)
	now := clock.Now()
	first, err := StartDaemon(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []lease.Event{
		{Kind: lease.Commit, MACAddress: ended, IPAddress: "10.254.4.1", Time: now, Expires: now.Add(5 * time.Minute)},
		{Kind: lease.Commit, MACAddress: running, IPAddress: "10.254.4.2", Time: now, Expires: now.Add(3 * time.Hour)},
	} {
		first.svc.Notice(t.Context(), ev)
	}
	credentials := func(url, mac, ip string) int {
		body := `{"addresses":[{"macAddress":"` + strings.ReplaceAll(mac, ":", "") +
			`","IPAddresses":[{"addressType":"IPv4","address":"` + ip + `"}]}]}`
		code, _ := call(t, "POST", url+"/v1/credentials", "Bearer "+testToken, body)
		return code
	}
	clock.Add(30 * time.Minute) // in the grace: perhaps renewed
	h := httptest.NewServer(NewAPI(first.svc, first.store, nil, testToken).Handler())
	defer h.Close()
	if code := credentials(h.URL, ended, "10.254.4.1"); code != 200 {
		t.Errorf("lease ended 25 min ago (grace 1 h): %d, want 200", code)
	}
	clock.Add(time.Hour)
	for _, tt := range []struct {
		mac, ip string
		want    int
	}{{mac: ended, ip: "10.254.4.1", want: 403}, {mac: running, ip: "10.254.4.2", want: 200}} {
		if code := credentials(h.URL, tt.mac, tt.ip); code != tt.want {
			t.Errorf("%s, 1 h 35 min on: %d, want %d", tt.mac, code, tt.want)
		}
	}
	first.svc.sweepLeases(t.Context())
	kept, err := first.store.Leases(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]heldLease{running: {ip: "10.254.4.2", expires: now.Add(3 * time.Hour)}}
	if diff := cmp.Diff(want, kept, cmp.AllowUnexported(heldLease{})); diff != "" {
		t.Errorf("leases kept after the sweep (-want +got):\n%s", diff)
	}
	if got := testutil.ToFloat64(first.svc.m.leasesSwept); got != 1 {
		t.Errorf("reds_leases_swept_total %v, want 1", got)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	url, _ := runDaemon(t, cfg)
	for _, tt := range []struct {
		mac, ip string
		want    int
	}{{mac: ended, ip: "10.254.4.1", want: 403}, {mac: running, ip: "10.254.4.2", want: 200}} {
		if code := credentials(url, tt.mac, tt.ip); code != tt.want {
			t.Errorf("%s after a restart: %d, want %d", tt.mac, code, tt.want)
		}
	}
}

// TestKnownCommitForgetsLease: a MAC whose later commit is Known (HSM has
// it, learnt another way) no longer counts as an unknown MAC's lease, in
// memory and in the store: the discovery token does not act for it
// (review-4: its old entry stayed).
func TestKnownCommitForgetsLease(t *testing.T) {
	_, d := startDaemon(t, false)
	const mac = "a4:bf:01:3c:00:01"
	d.svc.Notice(t.Context(), lease.Event{Kind: lease.Commit, MACAddress: mac, IPAddress: "10.254.5.1"})
	if got := d.svc.leaseOf(mac); got != "10.254.5.1" {
		t.Fatalf("lease of an unknown MAC %q, want 10.254.5.1", got)
	}
	d.svc.Notice(t.Context(), lease.Event{Kind: lease.Commit, MACAddress: mac, IPAddress: "10.254.5.1", Known: true})
	if got := d.svc.leaseOf(mac); got != "" {
		t.Errorf("lease after a Known commit %q, want none", got)
	}
	kept, err := d.store.Leases(t.Context())
	if _, ok := kept[mac]; ok || err != nil {
		t.Errorf("leases kept %v, %v; want none of %s", kept, err, mac)
	}
	h := NewAPI(d.svc, d.store, nil, testToken).Handler()
	body := `{"addresses":[{"macAddress":"` + strings.ReplaceAll(mac, ":", "") + `","IPAddresses":[{"addressType":"IPv4","address":"10.254.5.1"}]}]}`
	req := httptest.NewRequest("POST", "/v1/credentials", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testToken)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != 403 {
		t.Errorf("POST /v1/credentials with the discovery token: %d %s, want 403", w.Code, w.Body)
	}
}

// TestLeaseStoreFailureRedelivered: when a batch's leases cannot be
// stored, handleLeases returns the error (the bus then hands the batch
// again instead of committing its offsets), acts on none of it and leaves
// the leases in memory as they were, so the batch handed again makes the
// same changes (review-4: the failure was only logged and the batch
// committed, the leases lost at the next restart).
func TestLeaseStoreFailureRedelivered(t *testing.T) {
	_, d := startDaemon(t, false)
	const mac = "a4:bf:01:3c:00:02"
	b, err := lease.Encode(lease.Event{Kind: lease.Commit, MACAddress: mac, IPAddress: "10.254.5.2"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []bus.Message{{Value: b}}
	acted := func() float64 { return commitsActedOn(d.svc) }
	w := d.store.db.W
	if _, err := w.ExecContext(t.Context(), `CREATE TRIGGER full BEFORE INSERT ON leases BEGIN SELECT RAISE(ABORT, 'disk full'); END`); err != nil {
		t.Fatal(err)
	}
	if err := d.svc.handleLeases(t.Context(), msgs); err == nil {
		t.Fatal("handleLeases with a failing store: nil error, the bus would commit the batch")
	}
	if got, n := d.svc.leaseOf(mac), acted(); got != "" || n != 0 {
		t.Errorf("after the failure: lease %q, %v events acted on; want none, 0", got, n)
	}
	if _, err := w.ExecContext(t.Context(), `DROP TRIGGER full`); err != nil {
		t.Fatal(err)
	}
	if err := d.svc.handleLeases(t.Context(), msgs); err != nil {
		t.Fatal(err)
	}
	kept, err := d.store.Leases(t.Context())
	if err != nil || kept[mac].ip != "10.254.5.2" || d.svc.leaseOf(mac) != "10.254.5.2" || acted() != 1 {
		t.Errorf("the batch handed again: kept %v (%v), in memory %q, %v acted on; want it kept, known and acted on",
			kept, err, d.svc.leaseOf(mac), acted())
	}
}

// TestRenewalExtendsLease: the renewal events bss publishes for an unknown
// MAC (a commit at the same address with a later end, one per half lease)
// keep its lease standing long past the end and grace of the first commit:
// in memory, through the sweeps, in the database and across a restart. A
// lease whose renewals stop is swept LeaseGrace after the last end given.
func TestRenewalExtendsLease(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	cfg := DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "reds.db"), CredKeyFile: filepath.Join(dir, "key"),
		SLSURL: "http://127.0.0.1:1", HSMURL: "http://127.0.0.1:1",
		Service: Config{Now: clock.Now, LeaseGrace: time.Hour}}
	const (
		mac       = "a4:bf:01:3e:00:01"
		ip        = "10.254.7.1"
		leaseTime = 5 * time.Minute
	)
	first, err := StartDaemon(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	commit := func(d *Daemon) time.Time {
		now := clock.Now()
		d.svc.Notice(t.Context(), leaseEvent(mac, ip, now, now.Add(leaseTime)))
		return now.Add(leaseTime)
	}
	end := commit(first)
	for range 40 { // 100 min of renewals at T1, well past 5 min + 1 h
		clock.Add(leaseTime / 2)
		end = commit(first)
		first.svc.sweepLeases(t.Context())
		if got := first.svc.leaseOf(mac); got != ip {
			t.Fatalf("at %v: lease %q, want %s (renewed)", clock.Now(), got, ip)
		}
	}
	kept, err := first.store.Leases(t.Context())
	if err != nil || kept[mac].ip != ip || !kept[mac].expires.Equal(end) {
		t.Errorf("lease kept %+v, %v; want %s until %v", kept[mac], err, ip, end)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	_, again := runDaemon(t, cfg)
	if got := again.svc.leaseOf(mac); got != ip {
		t.Errorf("after a restart: lease %q, want %s", got, ip)
	}
	// The renewals stop: it stands through its grace, then it is swept.
	clock.Add(leaseTime + time.Hour - time.Second)
	if got := again.svc.leaseOf(mac); got != ip {
		t.Errorf("in its grace: lease %q, want %s", got, ip)
	}
	clock.Add(time.Second)
	again.svc.sweepLeases(t.Context())
	if got := again.svc.leaseOf(mac); got != "" {
		t.Errorf("past its grace: lease %q, want none", got)
	}
}

// leaseEvent is a commit of mac at ip noted at now, ending at end.
func leaseEvent(mac, ip string, now, end time.Time) lease.Event {
	return lease.Event{Kind: lease.Commit, MACAddress: mac, IPAddress: ip, Time: now, Expires: end}
}
