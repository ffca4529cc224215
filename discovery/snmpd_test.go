package discovery

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/hmsuite/hms/internal/testpeer"
)

// The v3 user the test snmpd knows (authPriv, SHA + AES).
var testV3 = SNMPCreds{User: "fabric", AuthProtocol: "SHA", AuthPasswd: "authpass123", PrivProtocol: "AES", PrivPasswd: "privpass123"}

// fdbPort and fdbEntry are the JSON fakeswitch.py serves.
type fdbPort struct {
	Port    int    `json:"port"`
	IfIndex int    `json:"ifIndex"`
	IfName  string `json:"ifName"`
	IfDescr string `json:"ifDescr"`
}

type fdbEntry struct {
	MAC  string `json:"mac"`
	Port int    `json:"port"`
	VLAN int    `json:"vlan,omitempty"`
}

// snmpd is a Debian snmpd serving a fake switch's FDB from a JSON file.
type snmpd struct {
	dir, addr string
}

// startSnmpd runs snmpd on a loopback port with community "public" and the
// v3 user testV3, serving ports and fdb; it is stopped at the end of the test.
func startSnmpd(t *testing.T, ports []fdbPort, fdb []fdbEntry) *snmpd {
	t.Helper()
	bin := requireSbin(t, "snmpd")
	python := testpeer.Require(t, "python3")
	dir := t.TempDir()
	script, err := os.ReadFile("testdata/fakeswitch.py")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fakeswitch.py"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &snmpd{dir: dir, addr: freeUDP(t)}
	s.setFDB(t, ports, fdb)
	conf := fmt.Sprintf(`agentAddress udp:%s
rocommunity public 127.0.0.1
master no
pass_persist .1.3.6.1.2.1.17 %[2]s %[3]s/fakeswitch.py %[3]s/fdb.json .1.3.6.1.2.1.17
pass_persist -p 10 .1.3.6.1.2.1.2.2 %[2]s %[3]s/fakeswitch.py %[3]s/fdb.json .1.3.6.1.2.1.2.2
pass_persist -p 10 .1.3.6.1.2.1.31.1.1 %[2]s %[3]s/fakeswitch.py %[3]s/fdb.json .1.3.6.1.2.1.31.1.1
sysName fake-tor-1
createUser %[4]s SHA "%[5]s" AES "%[6]s"
rouser %[4]s priv
`, s.addr, python, dir, testV3.User, testV3.AuthPasswd, testV3.PrivPasswd)
	if err := os.WriteFile(filepath.Join(dir, "snmpd.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-f", "-Lf", filepath.Join(dir, "snmpd.log"), "-C", "-c", filepath.Join(dir, "snmpd.conf"), "-m", "")
	cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+filepath.Join(dir, "persist"), "MIBS=")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start snmpd: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	s.waitReady(t)
	return s
}

// setFDB rewrites the FDB file the way an operator's tool would: a new file
// renamed over the old, which fakeswitch.py notices by its mtime.
func (s *snmpd) setFDB(t *testing.T, ports []fdbPort, fdb []fdbEntry) {
	t.Helper()
	if fdb == nil {
		fdb = []fdbEntry{} // fakeswitch.py fails on null
	}
	b, err := json.Marshal(map[string]any{"ports": ports, "fdb": fdb})
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(s.dir, "fdb.json.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, "fdb.json")); err != nil {
		t.Fatal(err)
	}
}

// waitReady polls sysName until snmpd answers; each try waits on the SNMP
// timeout, not on a sleep.
func (s *snmpd) waitReady(t *testing.T) {
	t.Helper()
	host, port, _ := net.SplitHostPort(s.addr)
	p, _ := strconv.Atoi(port)
	for range 50 {
		g := &gosnmp.GoSNMP{Target: host, Port: uint16(p), Community: "public", Version: gosnmp.Version2c,
			Timeout: 200 * time.Millisecond, Retries: 0, Context: context.Background(),
			// Unconnected, so a port not yet bound costs a timeout rather than
			// an immediate refusal: the loop waits on SNMP, never on a sleep.
			UseUnconnectedUDPSocket: true}
		if err := g.Connect(); err != nil {
			t.Fatal(err)
		}
		_, err := g.Get([]string{"1.3.6.1.2.1.1.5.0"})
		g.Conn.Close()
		if err == nil {
			s.warm(t)
			return
		}
	}
	log, _ := os.ReadFile(filepath.Join(s.dir, "snmpd.log"))
	t.Fatalf("snmpd on %s never answered; its log:\n%s", s.addr, log)
}

// warm asks each pass_persist subtree once, so the python processes behind
// them are started before a test times a walk.
func (s *snmpd) warm(t *testing.T) {
	t.Helper()
	host, port, _ := net.SplitHostPort(s.addr)
	p, _ := strconv.Atoi(port)
	g := &gosnmp.GoSNMP{Target: host, Port: uint16(p), Community: "public", Version: gosnmp.Version2c,
		Timeout: 10 * time.Second, Retries: 1, Context: context.Background()}
	if err := g.Connect(); err != nil {
		t.Fatal(err)
	}
	defer g.Conn.Close()
	for _, oid := range []string{"1.3.6.1.2.1.17", "1.3.6.1.2.1.2.2", "1.3.6.1.2.1.31.1.1"} {
		if _, err := g.GetNext([]string{oid}); err != nil {
			t.Fatalf("snmpd %s: %s: %v", s.addr, oid, err)
		}
	}
}

// requireSbin finds a program that Debian installs under /usr/sbin, which a
// non-root PATH may lack.
func requireSbin(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if p := "/usr/sbin/" + name; fileExists(p) {
		return p
	}
	return testpeer.Require(t, name)
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// freeUDP returns a loopback UDP address no one listens on.
func freeUDP(t *testing.T) string {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().String()
}
