package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/redfishsim"
)

// TestPowerCommand: under hms up, `hms power off` powers a simulated
// node off through pcs (HSM having walked its BMC), and `hms power status`
// reports it.
func TestPowerCommand(t *testing.T) {
	fleet, err := redfishsim.NewFleet(redfishsim.FleetConfig{Count: 1, Listen: "127.0.0.1:0", Tree: redfishsim.Template(1),
		User: "root", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithCancel(t.Context())
	fdone := make(chan error, 1)
	go func() { fdone <- fleet.Run(fctx) }()
	t.Cleanup(func() { cancel(); <-fdone })
	dir := t.TempDir()
	creds := filepath.Join(dir, "bmc.json")
	if err := os.WriteFile(creds, []byte(`{"default":{"Username":"root","Password":"pw"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	u := suiteUpWith(t, filepath.Join(dir, "data"), func(string) string { return "" },
		"-hsm-bmc-http", "-pcs-bmc-http", "-pcs-bmc-credentials", creds, "-pcs-confirm-interval", "10ms")
	m := fleet.Members()[0]
	ep, _ := json.Marshal(map[string]any{"ID": m.BMC.Xname(), "FQDN": m.Addr, "User": "root", "Password": "pw", "RediscoverOnUpdate": true})
	call(t, "POST", u["hsm"]+"/hsm/v2/Inventory/RedfishEndpoints", string(ep), 201)
	node := m.BMC.Xname() + "n0"
	for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		b := call(t, "GET", u["hsm"]+"/hsm/v2/Inventory/ComponentEndpoints?id="+node, "", 200)
		if strings.Contains(string(b), node) {
			break
		}
		if time.Now().After(end) {
			t.Fatal("HSM never walked the BMC")
		}
	}
	var out bytes.Buffer
	if err := run(t.Context(), []string{"power", "off", "-force", "-pcs-url", u["pcs"], node}, func(string) string { return "" }, &out); err != nil {
		t.Fatalf("hms power off: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), node+" succeeded Transition confirmed, forceoff") {
		t.Errorf("hms power off said:\n%s", out.String())
	}
	out.Reset()
	if err := run(t.Context(), []string{"power", "status", "-pcs-url", u["pcs"], node}, func(string) string { return "" }, &out); err != nil {
		t.Fatalf("hms power status: %v", err)
	}
	if got := out.String(); got != node+" off available\n" {
		t.Errorf("hms power status said %q", got)
	}
	if err := run(t.Context(), []string{"power", "on", "-pcs-url", u["pcs"], "x9999c0s0b0n0"}, func(string) string { return "" }, &out); err == nil {
		t.Error("hms power on of an unknown node succeeded")
	}
}
