package discovery

import (
	"fmt"
	"io"
	"net"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/internal/sealed"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/internal/testpeer"
)

// TestNodeCredsDroppedAtRegistration: a BMC whose node set, in-band, the
// password POST /v1/credentials handed out is registered with it, and the
// node_creds row is gone once it is (the endpoint keeps the password, as
// HSM does). HSM then loses the endpoint and the BMC comes back at another
// address: it is registered again there, logged in to with the endpoint's
// password, no node_creds needed.
func TestNodeCredsDroppedAtRegistration(t *testing.T) {
	s := newRiverSuite(t, 1)
	s.startService(NewSNMPWalker(SNMPConfig{}), Config{Switch: SwitchConfig{Community: "public"}})
	ctx := t.Context()
	x, mac := s.bmcs[0].BMC.Xname(), s.bmcMAC(0)
	const pw = "node-side-pw-0123456789"
	if err := s.store.PutNodeCreds(ctx, mac, pw); err != nil {
		t.Fatal(err)
	}
	// What the discovery image does with the password it was handed.
	if err := s.bmcClient(redfishsim.DefaultPassword).SetPassword(ctx, s.bmcs[0].Addr, "root", redfishsim.DefaultPassword, pw); err != nil {
		t.Fatal(err)
	}
	s.lease(mac, s.bmcIP(0))
	if o := s.waitFor(mac); o.err != nil || o.xname != x {
		t.Fatalf("outcome %+v (%v), want %s registered", o, o.err, x)
	}
	checkRegistered(t, s, x, s.bmcIP(0), pw)

	if err := s.hsm.DeleteRedfishEndpoint(ctx, x); err != nil {
		t.Fatal(err)
	}
	moved := proxyBMC(t, s.bmcs[0].Addr, fmt.Sprintf("127.78.%d.1", s.port%200+1), s.port)
	s.lease(mac, moved)
	if o := s.waitFor(mac); o.err != nil || o.xname != x {
		t.Fatalf("at %s: outcome %+v (%v), want %s registered", moved, o, o.err, x)
	}
	checkRegistered(t, s, x, moved, pw)
	ep, err := s.hsm.RedfishEndpoint(ctx, x)
	if err != nil || ep.IPAddress != moved {
		t.Errorf("HSM's RedfishEndpoint %+v, %v; want it at %s", ep, err, moved)
	}
}

// TestNodeCredsKeptWhenAnotherPasswordLoggedIn: a node-side password was
// handed out but the node has not set it yet; reds logs in with the
// factory password and sets its own. The node-side password is kept: when
// the discovery image sets it in-band later, reds' own no longer logs in
// and the next attempt needs it.
func TestNodeCredsKeptWhenAnotherPasswordLoggedIn(t *testing.T) {
	s := newRiverSuite(t, 1)
	s.startService(NewSNMPWalker(SNMPConfig{}), Config{Switch: SwitchConfig{Community: "public"}})
	ctx := t.Context()
	x, mac := s.bmcs[0].BMC.Xname(), s.bmcMAC(0)
	const pw = "node-side-pw-0123456789"
	if err := s.store.PutNodeCreds(ctx, mac, pw); err != nil {
		t.Fatal(err)
	}
	s.lease(mac, s.bmcIP(0))
	if o := s.waitFor(mac); o.err != nil || o.xname != x {
		t.Fatalf("outcome %+v (%v), want %s registered", o, o.err, x)
	}
	e, err := s.store.Get(ctx, x)
	if err != nil || e.State != StateRegistered || e.Password == pw {
		t.Fatalf("stored %s: %+v, %v; want registered with a password of reds' own", x, e.State, err)
	}
	nc, err := s.store.NodeCreds(ctx, mac)
	if err != nil || nc.Password != pw {
		t.Errorf("node credentials of %s = %q, %v; want %q kept", mac, nc.Password, err, pw)
	}
}

// checkRegistered checks that reds has x registered at ip with password pw
// and keeps no node-side password for its MAC.
func checkRegistered(t *testing.T, s *suite, x, ip, pw string) {
	t.Helper()
	e, err := s.store.Get(t.Context(), x)
	if err != nil || e.State != StateRegistered || e.IP != ip || e.Password != pw {
		t.Errorf("stored %s: %s at %s, %v; want registered at %s with the node's password", x, e.State, e.IP, err, ip)
	}
	nc, err := s.store.NodeCreds(t.Context(), e.MAC)
	if err != nil || nc.Password != "" {
		t.Errorf("node credentials of %s kept after the registration (%v)", e.MAC, err)
	}
}

// proxyBMC forwards TCP connections to host:port to the BMC at addr (the
// BMC given another address by DHCP) until the test ends; it returns host.
func proxyBMC(t *testing.T, addr, host string, port int) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, fmt.Sprint(port)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				defer b.Close()
				go func() { _, _ = io.Copy(b, c); b.Close() }()
				_, _ = io.Copy(c, b)
			}()
		}
	}()
	return host
}

// TestRegisterKeepsNewerNodeCreds: registration drops the node-side
// password provisioning read, not one handed out since (the node may be
// about to set it).
func TestRegisterKeepsNewerNodeCreds(t *testing.T) { pg.EachDB(t, testRegisterKeepsNewerNodeCreds) }

func testRegisterKeepsNewerNodeCreds(t *testing.T, db testpeer.DB) {
	st := openTestStore(t, db(t), testBox(t))
	ctx := t.Context()
	const mac = "a4:bf:01:3d:00:01"
	e := Endpoint{Xname: "x3000c0s1b0", Kind: KindRiver, MAC: mac, IP: "10.254.6.1", User: "root", Password: "first"}
	for _, tt := range []struct {
		name, newer, want string
	}{
		{name: "unchanged: dropped", want: ""},
		{name: "handed out since: kept", newer: "second", want: "second"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := st.PutNodeCreds(ctx, mac, "first"); err != nil {
				t.Fatal(err)
			}
			read, err := st.NodeCreds(ctx, mac)
			if err != nil || read.Password != "first" {
				t.Fatalf("NodeCreds %q, %v", read.Password, err)
			}
			if tt.newer != "" {
				if err := st.PutNodeCreds(ctx, mac, tt.newer); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.Register(ctx, e, read); err != nil {
				t.Fatal(err)
			}
			got, err := st.NodeCreds(ctx, mac)
			if err != nil || got.Password != tt.want {
				t.Errorf("node credentials after the registration %q, %v; want %q", got.Password, err, tt.want)
			}
			if stored, err := st.Get(ctx, e.Xname); err != nil || stored.State != StateRegistered || stored.Password != "first" {
				t.Errorf("endpoint %s %q, %v; want registered with its password", stored.State, stored.Password, err)
			}
		})
	}
}

// TestNodeCredsMigration: a database of the version before migration
// 0004, opened now, loses only the node-side passwords that are the
// password of the BMC registered (or missing since) with their MAC, as
// Register drops them. An admin's password handed out after the BMC was
// registered is kept, though the BMC changed state since (missing, or
// missing and back: its row's updated moved past the password's
// created, which 0004 as first written took for a registration after the
// hand-out, and deleted it); so is one reds did not log in with, and
// those of BMCs pending or removed, or unknown.
func TestNodeCredsMigration(t *testing.T) { pg.EachDB(t, testNodeCredsMigration) }

func testNodeCredsMigration(t *testing.T, db testpeer.DB) {
	path := db(t)
	old := fstest.MapFS{}
	for _, name := range []string{"0001_init.sql", "0002_leases.sql", "0003_lease_expiry.sql"} {
		b, err := migrationFiles.ReadFile("migrations/" + name)
		if err != nil {
			t.Fatal(err)
		}
		old[name] = &fstest.MapFile{Data: b}
	}
	first, err := sqldb.Open(t.Context(), path, old)
	if err != nil {
		t.Fatal(err)
	}
	box := testBox(t)
	seal := func(id, pw string) []byte {
		b, err := box.Seal(id, []byte(pw))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for i, tt := range []struct {
		mac, state, own, node string
		updated, created      int64
	}{
		{mac: "mac-registered-with-it", state: StateRegistered, own: "pw", node: "pw", updated: 200, created: 100},
		{mac: "mac-missing-with-it", state: StateMissing, own: "pw", node: "pw", updated: 300, created: 100},
		{mac: "mac-reissued-then-missing", state: StateMissing, own: "pw", node: "admin", updated: 300, created: 200},
		{mac: "mac-reissued-then-back", state: StateRegistered, own: "pw", node: "admin", updated: 400, created: 200},
		{mac: "mac-reds-own-logged-in", state: StateRegistered, own: "reds", node: "node", updated: 200, created: 100},
		{mac: "mac-pending", state: StatePending, own: "pw", node: "pw", updated: 200, created: 100},
		{mac: "mac-removed", state: StateRemoved, own: "pw", node: "pw", updated: 200, created: 100},
	} {
		x := fmt.Sprintf("x3000c0s%db0", i+1)
		if _, err := first.W.ExecContext(t.Context(), `INSERT INTO endpoints (xname, kind, mac, password, state, updated) VALUES (?, 'river', ?, ?, ?, ?)`,
			x, tt.mac, seal(x, tt.own), tt.state, tt.updated); err != nil {
			t.Fatal(err)
		}
		if _, err := first.W.ExecContext(t.Context(), `INSERT INTO node_creds (mac, password, created) VALUES (?, ?, ?)`,
			tt.mac, seal(tt.mac, tt.node), tt.created); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := first.W.ExecContext(t.Context(), `INSERT INTO node_creds (mac, password, created) VALUES ('mac-none', ?, 100)`,
		seal("mac-none", "pw")); err != nil {
		t.Fatal(err)
	}
	first.Close()
	st := openTestStore(t, path, box)
	rows, err := st.db.R.QueryContext(t.Context(), `SELECT mac FROM node_creds ORDER BY mac`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var kept []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, m)
	}
	want := []string{"mac-none", "mac-pending", "mac-reds-own-logged-in", "mac-reissued-then-back", "mac-reissued-then-missing", "mac-removed"}
	if diff := cmp.Diff(want, kept); diff != "" {
		t.Errorf("node_creds kept (-want +got):\n%s", diff)
	}
}

// testBox is a new key sealing passwords, in t.TempDir.
func testBox(t *testing.T) *sealed.Box {
	t.Helper()
	box, err := sealed.LoadKey(filepath.Join(t.TempDir(), "reds.key"))
	if err != nil {
		t.Fatal(err)
	}
	return box
}

// openTestStore opens the store at path (a SQLite file or a PostgreSQL
// URL) sealing with box, closed when the test ends (Close again before is
// harmless).
func openTestStore(t *testing.T, path string, box *sealed.Box) *Store {
	t.Helper()
	st, err := OpenStore(t.Context(), path, box, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
