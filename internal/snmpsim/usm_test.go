package snmpsim

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gosnmp/gosnmp"
)

// protocolPairs are the authentication and privacy protocols the v3 tests
// walk with: each auth protocol, each privacy protocol, and authNoPriv.
var protocolPairs = []User{
	{AuthProtocol: gosnmp.SHA, PrivProtocol: gosnmp.NoPriv},
	{AuthProtocol: gosnmp.MD5, PrivProtocol: gosnmp.DES},
	{AuthProtocol: gosnmp.SHA, PrivProtocol: gosnmp.AES},
	{AuthProtocol: gosnmp.SHA224, PrivProtocol: gosnmp.AES192},
	{AuthProtocol: gosnmp.SHA256, PrivProtocol: gosnmp.AES},
	{AuthProtocol: gosnmp.SHA384, PrivProtocol: gosnmp.AES256},
	{AuthProtocol: gosnmp.SHA512, PrivProtocol: gosnmp.AES256C},
	{AuthProtocol: gosnmp.SHA256, PrivProtocol: gosnmp.AES192C},
}

func pairName(u User) string { return u.AuthProtocol.String() + "/" + u.PrivProtocol.String() }

// TestV3WalkGosnmp: gosnmp's manager discovers the engine and walks the
// forwarding table with GETBULK and GETNEXT at each protocol pair; the
// agent answers no v2c when it has no community.
func TestV3WalkGosnmp(t *testing.T) {
	for _, pair := range protocolPairs {
		t.Run(pairName(pair), func(t *testing.T) {
			u := User{Name: "fabric", AuthProtocol: pair.AuthProtocol, AuthPassphrase: "auth-pass-1",
				PrivProtocol: pair.PrivProtocol, PrivPassphrase: "priv-pass-1"}
			port := serve(t, newTestAgent(t, Config{Users: []User{u}}))
			g := v3Client(t, port, u, 2*time.Second)
			bulk, err := g.BulkWalkAll(oidQFdb)
			if err != nil {
				t.Fatalf("bulk walk: %v", err)
			}
			if diff := cmp.Diff(testFDB, fdbOf(t, bulk)); diff != "" {
				t.Errorf("bulk walk (-want +got):\n%s", diff)
			}
			walk, err := g.WalkAll(oidQFdb)
			if err != nil {
				t.Fatalf("walk: %v", err)
			}
			if diff := cmp.Diff(testFDB, fdbOf(t, walk)); diff != "" {
				t.Errorf("walk (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("no v2c", func(t *testing.T) {
		u := User{Name: "fabric", AuthProtocol: gosnmp.SHA, AuthPassphrase: "auth-pass-1"}
		port := serve(t, newTestAgent(t, Config{Users: []User{u}}))
		g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: port, Version: gosnmp.Version2c, Community: "public",
			Timeout: 200 * time.Millisecond, Context: t.Context()}
		if err := g.Connect(); err != nil {
			t.Fatal(err)
		}
		defer g.Conn.Close()
		if _, err := g.Get([]string{"." + oidQFdb + ".4.170.0.0.0.0.1"}); err == nil {
			t.Error("a v3-only agent answered v2c")
		}
	})
}

// TestV3Reports: each failed check of RFC 3414 3.2 gets its Report, with
// the counter's OID, the agent's engine ID, boots and time, the request's
// msgID (and request-id when readable); an authenticated Report for a
// message out of the time window.
func TestV3Reports(t *testing.T) {
	clk := newClock()
	authOnly := User{Name: "monitor", AuthProtocol: gosnmp.SHA256, AuthPassphrase: "auth-pass-1"}
	priv := User{Name: "fabric", AuthProtocol: gosnmp.SHA, AuthPassphrase: "auth-pass-1", PrivProtocol: gosnmp.AES, PrivPassphrase: "priv-pass-1"}
	a := newTestAgent(t, Config{Users: []User{authOnly, priv}, EngineID: testEngineID, Boots: 3, Now: clk.Now})
	clk.Advance(1000 * time.Second)
	other := []byte{0x80, 0, 0, 0, 5, 'o', 't', 'h', 'e', 'r'}
	wrongAuth, wrongPriv, stranger := priv, priv, priv
	wrongAuth.AuthPassphrase, wrongPriv.PrivPassphrase, stranger.Name = "not-the-pass", "not-the-pass", "stranger"
	for _, tc := range []struct {
		name   string
		req    []byte
		oid    string
		authed bool // the report is authNoPriv
	}{
		{name: "engine discovery", req: probe(t, gosnmp.Reportable), oid: usmStatsUnknownEngineIDs},
		{name: "other engine", req: encode(t, priv, gosnmp.AuthPriv, other, 3, 1000), oid: usmStatsUnknownEngineIDs},
		{name: "unknown user", req: encode(t, stranger, gosnmp.AuthPriv, testEngineID, 3, 1000), oid: usmStatsUnknownUserNames},
		{name: "no auth", req: encode(t, priv, gosnmp.NoAuthNoPriv, testEngineID, 3, 1000), oid: usmStatsUnsupportedSecLevels},
		{name: "priv for authNoPriv user", req: encode(t, User{Name: "monitor", AuthProtocol: gosnmp.SHA256, AuthPassphrase: "auth-pass-1",
			PrivProtocol: gosnmp.AES, PrivPassphrase: "priv-pass-1"}, gosnmp.AuthPriv, testEngineID, 3, 1000), oid: usmStatsUnsupportedSecLevels},
		{name: "wrong auth key", req: encode(t, wrongAuth, gosnmp.AuthPriv, testEngineID, 3, 1000), oid: usmStatsWrongDigests},
		{name: "time too old", req: encode(t, priv, gosnmp.AuthPriv, testEngineID, 3, 1000-151), oid: usmStatsNotInTimeWindows, authed: true},
		{name: "time too new", req: encode(t, priv, gosnmp.AuthPriv, testEngineID, 3, 1000+151), oid: usmStatsNotInTimeWindows, authed: true},
		{name: "other boots", req: encode(t, priv, gosnmp.AuthPriv, testEngineID, 2, 1000), oid: usmStatsNotInTimeWindows, authed: true},
		{name: "wrong priv key", req: encode(t, wrongPriv, gosnmp.AuthPriv, testEngineID, 3, 1000), oid: usmStatsDecryptionErrors, authed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, ok := a.answer(tc.req)
			if !ok {
				t.Fatal("no answer")
			}
			p := decodeAnswer(t, out, priv)
			sp := p.SecurityParameters.(*gosnmp.UsmSecurityParameters)
			if p.PDUType != gosnmp.Report || len(p.Variables) != 1 || p.Variables[0].Name != tc.oid {
				t.Fatalf("answer %v %+v, want a Report of %s", p.PDUType, p.Variables, tc.oid)
			}
			if sp.AuthoritativeEngineID != string(testEngineID) || sp.AuthoritativeEngineBoots != 3 || sp.AuthoritativeEngineTime != 1000 {
				t.Errorf("report from engine %x boots %d time %d, want %x 3 1000", sp.AuthoritativeEngineID,
					sp.AuthoritativeEngineBoots, sp.AuthoritativeEngineTime, testEngineID)
			}
			if authed := p.MsgFlags&gosnmp.AuthPriv == gosnmp.AuthNoPriv; authed != tc.authed {
				t.Errorf("report flags %v, want authenticated %v", p.MsgFlags, tc.authed)
			}
			req, _ := parseV3(tc.req)
			if int64(p.MsgID) != req.msgID {
				t.Errorf("msgID %d, want the request's %d", p.MsgID, req.msgID)
			}
		})
	}
	if out, ok := a.answer(probe(t, 0)); ok {
		t.Errorf("answered a probe that is not reportable: %x", out)
	}
	if p := decodeAnswer(t, first(a.answer(probe(t, gosnmp.Reportable))), priv); p.RequestID != 4242 {
		t.Errorf("discovery report request-id %d, want 4242", p.RequestID)
	}
}

func first(b []byte, _ bool) []byte { return b }

// TestV3TimeWindow: an engine whose clock has moved on answers a
// manager's stale time with an authenticated notInTimeWindow Report,
// which gosnmp's manager trusts, resyncs on and sends again: the walk
// succeeds.
func TestV3TimeWindow(t *testing.T) {
	clk := newClock()
	u := User{Name: "fabric", AuthProtocol: gosnmp.SHA256, AuthPassphrase: "auth-pass-1", PrivProtocol: gosnmp.AES, PrivPassphrase: "priv-pass-1"}
	a := newTestAgent(t, Config{Users: []User{u}, Now: clk.Now})
	g := v3Client(t, serve(t, a), u, 2*time.Second)
	if _, err := g.BulkWalkAll(oidQFdb); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	got, err := g.BulkWalkAll(oidQFdb)
	if err != nil {
		t.Fatalf("walk after an hour: %v", err)
	}
	if diff := cmp.Diff(testFDB, fdbOf(t, got)); diff != "" {
		t.Errorf("walk (-want +got):\n%s", diff)
	}
	if n := a.v3.notInWindow.Load(); n != 1 {
		t.Errorf("%d notInTimeWindow reports, want 1", n)
	}
}

// TestV3WrongCredentials: gosnmp's manager with a wrong user or key gets
// no answer it trusts (the Reports are unauthenticated): an error, never
// the table.
func TestV3WrongCredentials(t *testing.T) {
	u := User{Name: "fabric", AuthProtocol: gosnmp.SHA, AuthPassphrase: "auth-pass-1", PrivProtocol: gosnmp.AES, PrivPassphrase: "priv-pass-1"}
	a := newTestAgent(t, Config{Users: []User{u}})
	port := serve(t, a)
	wrongUser, wrongKey := u, u
	wrongUser.Name, wrongKey.AuthPassphrase = "stranger", "not-the-pass"
	for _, c := range []User{wrongUser, wrongKey} {
		if _, err := v3Client(t, port, c, 200*time.Millisecond).BulkWalkAll(oidQFdb); err == nil {
			t.Errorf("%s/%s walked", c.Name, c.AuthPassphrase)
		}
	}
	if a.v3.unknownUser.Load() == 0 || a.v3.wrongDigest.Load() == 0 {
		t.Errorf("reports: %d unknown user, %d wrong digest; want some of each", a.v3.unknownUser.Load(), a.v3.wrongDigest.Load())
	}
}

// TestV3PrivUserAtAuthNoPriv: an authPriv user asking without privacy is
// authenticated but refused by access control (authorizationError), as
// net-snmp's `rouser NAME priv` does.
func TestV3PrivUserAtAuthNoPriv(t *testing.T) {
	u := User{Name: "fabric", AuthProtocol: gosnmp.SHA, AuthPassphrase: "auth-pass-1", PrivProtocol: gosnmp.AES, PrivPassphrase: "priv-pass-1"}
	a := newTestAgent(t, Config{Users: []User{u}, EngineID: testEngineID, Now: newClock().Now})
	out, ok := a.answer(encode(t, u, gosnmp.AuthNoPriv, testEngineID, 1, 0))
	if !ok {
		t.Fatal("no answer")
	}
	if p := decodeAnswer(t, out, u); p.PDUType != gosnmp.GetResponse || p.Error != gosnmp.AuthorizationError {
		t.Errorf("answer %v error %v, want a GetResponse with authorizationError", p.PDUType, p.Error)
	}
}

// TestNewAgentRefuses: users an agent cannot serve are refused at New.
func TestNewAgentRefuses(t *testing.T) {
	ok := User{Name: "fabric", AuthProtocol: gosnmp.SHA, AuthPassphrase: "auth-pass-1"}
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{name: "no name", cfg: Config{Users: []User{{AuthProtocol: gosnmp.SHA, AuthPassphrase: "auth-pass-1"}}}},
		{name: "no auth", cfg: Config{Users: []User{{Name: "x", AuthProtocol: gosnmp.NoAuth, AuthPassphrase: "auth-pass-1"}}}},
		{name: "short key", cfg: Config{Users: []User{{Name: "x", AuthProtocol: gosnmp.SHA, AuthPassphrase: "short"}}}},
		{name: "short priv key", cfg: Config{Users: []User{{Name: "x", AuthProtocol: gosnmp.SHA, AuthPassphrase: "auth-pass-1",
			PrivProtocol: gosnmp.AES, PrivPassphrase: "short"}}}},
		{name: "twice", cfg: Config{Users: []User{ok, ok}}},
		{name: "short engine ID", cfg: Config{Users: []User{ok}, EngineID: []byte{1, 2, 3}}},
	} {
		if _, err := NewAgent(tc.cfg); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if _, err := NewAgent(Config{Users: []User{ok}}); err != nil {
		t.Errorf("a good user: %v", err)
	}
}
