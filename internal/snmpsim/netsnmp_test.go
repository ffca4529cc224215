package snmpsim

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gosnmp/gosnmp"

	"github.com/hmsuite/hms/internal/testpeer"
)

// netSNMP runs a net-snmp command (snmpwalk, snmpbulkwalk) with no
// configuration, MIBs or persistent state but the test's own.
func netSNMP(t *testing.T, bin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return netSNMPConf(t, "", bin, args...)
}

// netSNMPConf is netSNMP with conf as its snmp.conf.
func netSNMPConf(t *testing.T, conf, bin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "snmp.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), bin, append([]string{"-m", "", "-On", "-r", "0", "-t", "2"}, args...)...)
	cmd.Env = []string{"HOME=" + dir, "SNMPCONFPATH=" + dir, "SNMP_PERSISTENT_DIR=" + dir, "MIBS="}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// parseWalk reads net-snmp's "-On" lines: ".1.3... = INTEGER: 1".
func parseWalk(t *testing.T, out string) map[string]int {
	t.Helper()
	got := map[string]int{}
	for line := range strings.Lines(out) {
		name, val, ok := strings.Cut(strings.TrimSpace(line), " = INTEGER: ")
		n, err := strconv.Atoi(val)
		if !ok || err != nil {
			t.Errorf("snmpwalk line %q", line)
			continue
		}
		got[name] = n
	}
	return got
}

// netSNMPName is a protocol's name as net-snmp's -a and -x take it.
func netSNMPName(s string) string {
	return strings.NewReplacer("SHA224", "SHA-224", "SHA256", "SHA-256", "SHA384", "SHA-384", "SHA512", "SHA-512",
		"AES192", "AES-192", "AES256", "AES-256").Replace(s)
}

// TestNetSNMPWalkV3: Debian's net-snmp snmpwalk and snmpbulkwalk discover
// the agent's engine and walk its forwarding table over v3 at each
// protocol pair net-snmp speaks; a wrong user, auth key or priv key gets
// net-snmp's messages for the usmStats Reports, and no table.
func TestNetSNMPWalkV3(t *testing.T) {
	walk := testpeer.Require(t, "snmpwalk")
	bulk := testpeer.Require(t, "snmpbulkwalk")
	pairs := []User{
		{AuthProtocol: gosnmp.SHA, PrivProtocol: gosnmp.NoPriv},
		{AuthProtocol: gosnmp.MD5, PrivProtocol: gosnmp.DES},
		{AuthProtocol: gosnmp.SHA, PrivProtocol: gosnmp.AES},
		{AuthProtocol: gosnmp.SHA256, PrivProtocol: gosnmp.AES},
		{AuthProtocol: gosnmp.SHA512, PrivProtocol: gosnmp.AES256},
	}
	for _, pair := range pairs {
		t.Run(pairName(pair), func(t *testing.T) {
			u := User{Name: "fabric", AuthProtocol: pair.AuthProtocol, AuthPassphrase: "auth-pass-1",
				PrivProtocol: pair.PrivProtocol, PrivPassphrase: "priv-pass-1"}
			target := "udp:127.0.0.1:" + itoa(serve(t, newTestAgent(t, Config{Users: []User{u}})))
			for _, bin := range []string{walk, bulk} {
				out, errOut, err := netSNMP(t, bin, append(v3Args(u), target, oidQFdb)...)
				if err != nil {
					t.Fatalf("%s: %v\n%s", bin, err, errOut)
				}
				if diff := cmp.Diff(testFDB, parseWalk(t, out)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", bin, diff)
				}
			}
		})
	}
	u := User{Name: "fabric", AuthProtocol: gosnmp.SHA, AuthPassphrase: "auth-pass-1", PrivProtocol: gosnmp.AES, PrivPassphrase: "priv-pass-1"}
	target := "udp:127.0.0.1:" + itoa(serve(t, newTestAgent(t, Config{Users: []User{u}})))
	wrongUser, wrongAuth, wrongPriv := u, u, u
	wrongUser.Name, wrongAuth.AuthPassphrase, wrongPriv.PrivPassphrase = "stranger", "not-the-pass", "not-the-pass"
	for _, tc := range []struct {
		name string
		u    User
		want string // net-snmp's message for the Report
	}{
		{name: "wrong user", u: wrongUser, want: "Unknown user name"},
		{name: "wrong auth key", u: wrongAuth, want: "Authentication failure"},
		{name: "wrong priv key", u: wrongPriv, want: "Decryption error"},
	} {
		out, errOut, err := netSNMP(t, walk, append(v3Args(tc.u), target, oidQFdb)...)
		if err == nil || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: err %v, stdout %q, stderr %q; want %q and no table", tc.name, err, out, errOut, tc.want)
		}
	}
}

// v3Args are net-snmp's options for u.
func v3Args(u User) []string {
	args := []string{"-v3", "-u", u.Name, "-a", netSNMPName(u.AuthProtocol.String()), "-A", u.AuthPassphrase}
	if u.PrivProtocol == 0 || u.PrivProtocol == gosnmp.NoPriv {
		return append(args, "-l", "authNoPriv")
	}
	return append(args, "-l", "authPriv", "-x", netSNMPName(u.PrivProtocol.String()), "-X", u.PrivPassphrase)
}
