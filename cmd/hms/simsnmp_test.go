package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gosnmp/gosnmp"

	"github.com/hmsuite/hms/internal/cli"
)

// TestSimSNMPFlags: -snmp-version 3 makes a user of the flags (passphrases
// generated when not given); bad versions, protocols, short passphrases
// and v3 flags without -snmp-version 3 are usage errors.
func TestSimSNMPFlags(t *testing.T) {
	parse := func(args ...string) (*simSNMPFlags, *cli.FlagSet) {
		f := cli.NewFlagSet("sim", func(string) string { return "" }, io.Discard)
		fl := registerSimSNMP(f)
		if err := f.Parse(args); err != nil {
			t.Fatal(err)
		}
		return fl, f
	}
	fl, f := parse()
	if u, err := fl.v3User(f); err != nil || u.Name != "" {
		t.Errorf("default: %+v %v, want v2c", u, err)
	}
	fl, f = parse("-snmp-version", "3", "-snmp-auth-proto", "sha-256", "-snmp-priv-proto", "none")
	u, err := fl.v3User(f)
	if err != nil || u.Name != "hms-sim" || u.AuthProtocol != gosnmp.SHA256 || u.PrivProtocol != gosnmp.NoPriv ||
		len(u.AuthPassphrase) < 8 || u.PrivPassphrase != "" {
		t.Errorf("v3 authNoPriv: %+v %v", u, err)
	}
	fl, f = parse("-snmp-version", "3", "-snmp-auth-key", "auth-pass-1", "-snmp-priv-key", "priv-pass-1")
	if u, err := fl.v3User(f); err != nil || u.AuthProtocol != gosnmp.SHA || u.PrivProtocol != gosnmp.AES ||
		u.AuthPassphrase != "auth-pass-1" || u.PrivPassphrase != "priv-pass-1" {
		t.Errorf("v3 given keys: %+v %v", u, err)
	}
	for _, args := range [][]string{
		{"-snmp-version", "1"},
		{"-snmp-user", "x"},
		{"-snmp-version", "3", "-snmp-auth-proto", "SHA3"},
		{"-snmp-version", "3", "-snmp-priv-proto", "3DES"},
		{"-snmp-version", "3", "-snmp-auth-key", "short"},
		{"-snmp-version", "3", "-snmp-user", ""},
	} {
		fl, f := parse(args...)
		var ue *cli.UsageError
		if _, err := fl.v3User(f); !errors.As(err, &ue) {
			t.Errorf("%v: err %v, want a usage error", args, err)
		}
	}
}

// TestSimSNMPv3: `hms sim -snmp-version 3`: the switches answer only
// their v3 user, SLS gives reds its credentials as CSM's SLS does, and
// discovery completes over v3: both BMCs registered, both nodes Ready.
func TestSimSNMPv3(t *testing.T) {
	u, _ := simUp(t, "-nodes", "2", "-snmp-version", "3", "-snmp-auth-proto", "SHA256", "-snmp-priv-proto", "AES")
	waitHSM(t, u["hsm"], "Node", "2 Ready nodes", func(st map[string]string) bool {
		return st["x3000c0s1b0n0"] == "Ready" && st["x3000c0s1b1n0"] == "Ready"
	})
	var eps struct{ Endpoints []struct{ Xname string } }
	json.Unmarshal(call(t, "GET", u["reds"]+"/v1/endpoints?state=registered", "", http.StatusOK), &eps)
	if len(eps.Endpoints) != 2 {
		t.Errorf("reds registered %d BMCs, want 2: %+v", len(eps.Endpoints), eps)
	}
	// The BMCs were placed by walks of the v3-only switch, not another way.
	walked := false
	for line := range strings.Lines(string(call(t, "GET", u["reds"]+"/metrics", "", http.StatusOK))) {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), `reds_snmp_walks_total{result="ok"} `)
		walked = walked || (ok && v != "0")
	}
	if !walked {
		t.Error("reds counted no good SNMP walk")
	}
	var sw struct{ ExtraProperties map[string]any }
	json.Unmarshal(call(t, "GET", u["sls"]+"/v1/hardware/x3000c0w1", "", http.StatusOK), &sw)
	p := sw.ExtraProperties
	if p["SNMPUsername"] != "hms-sim" || p["SNMPAuthProtocol"] != "SHA256" || p["SNMPPrivProtocol"] != "AES" ||
		p["SNMPAuthPassword"] == nil || p["SNMPPrivPassword"] == nil {
		t.Errorf("SLS switch: %v", p)
	}
}
