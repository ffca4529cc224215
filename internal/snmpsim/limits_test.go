package snmpsim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gosnmp/gosnmp"

	"github.com/hmsuite/hms/internal/testpeer"
)

// bigSwitch has n ports with long names, a MAC learned on each: tables no
// single answer holds.
func bigSwitch(n int) Switch {
	var sw Switch
	for i := range n {
		sw.Ports = append(sw.Ports, Port{Bridge: i + 1, IfIndex: 1001 + i, Name: fmt.Sprintf("ethernet1/1/%d-a-long-port-description", i+1)})
		sw.FDB = append(sw.FDB, Entry{MAC: fmt.Sprintf("aa:00:00:00:%02x:%02x", i>>8, i&0xff), Bridge: i + 1, VLAN: 4})
	}
	return sw
}

// ifNames are the OIDs of the ifName of bigSwitch's first n ports.
func ifNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("1.3.6.1.2.1.31.1.1.1.1.%d", 1001+i)
	}
	return out
}

// v3Request is a request of u to the agent of testEngineID (boots 1, time
// 0) with msgMaxSize maxSize, as gosnmp encodes it.
func v3Request(t *testing.T, u User, pdu gosnmp.PDUType, maxSize, reps uint32, oids ...string) []byte {
	t.Helper()
	sp := usmParams(u)
	sp.AuthoritativeEngineID, sp.AuthoritativeEngineBoots = string(testEngineID), 1
	if level(u) == gosnmp.AuthPriv {
		sp.PrivacyParameters = []byte{0, 0, 0, 0, 0, 0, 0, 1} // the salt
	}
	if err := sp.InitSecurityKeys(); err != nil {
		t.Fatal(err)
	}
	p := &gosnmp.SnmpPacket{Version: gosnmp.Version3, MsgFlags: level(u) | gosnmp.Reportable,
		SecurityModel: gosnmp.UserSecurityModel, SecurityParameters: sp, ContextEngineID: string(testEngineID),
		PDUType: pdu, MsgID: 7, RequestID: 8, MsgMaxSize: maxSize, MaxRepetitions: reps, Logger: gosnmp.NewLogger(nil)}
	for _, o := range oids {
		p.Variables = append(p.Variables, gosnmp.SnmpPDU{Name: "." + o, Type: gosnmp.Null})
	}
	b, err := p.MarshalMsg()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// names are the OIDs of pdus, each with its leading dot.
func names(pdus []gosnmp.SnmpPDU) []string {
	out := make([]string, len(pdus))
	for i, p := range pdus {
		out[i] = "." + strings.TrimPrefix(p.Name, ".")
	}
	return out
}

// TestV3AnswerLongerThanMsgMaxSize: as snmpd, an answer longer than the
// request's msgMaxSize is not sent: a GETBULK gets genErr with the
// request's bindings, any other request no answer; a msgMaxSize below 484
// gets no answer (RFC 3412 6).
func TestV3AnswerLongerThanMsgMaxSize(t *testing.T) {
	noPriv := User{Name: "monitor", AuthProtocol: gosnmp.SHA256, AuthPassphrase: "auth-pass-1"}
	des := User{Name: "old", AuthProtocol: gosnmp.MD5, AuthPassphrase: "auth-pass-1", PrivProtocol: gosnmp.DES, PrivPassphrase: "priv-pass-1"}
	aes := User{Name: "fabric", AuthProtocol: gosnmp.SHA, AuthPassphrase: "auth-pass-1", PrivProtocol: gosnmp.AES, PrivPassphrase: "priv-pass-1"}
	a, err := NewAgent(Config{Users: []User{noPriv, des, aes}, EngineID: testEngineID, Now: newClock().Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Set(bigSwitch(64)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		u        User
		pdu      gosnmp.PDUType
		maxSize  uint32
		reps     uint32
		oids     []string
		want     gosnmp.SNMPError
		silent   bool
		bindings int // of an answer
	}{
		{name: "bulk over 484", u: noPriv, pdu: gosnmp.GetBulkRequest, maxSize: 484, reps: 50, oids: []string{oidQFdb}, want: gosnmp.GenErr, bindings: 1},
		{name: "bulk over 484, DES", u: des, pdu: gosnmp.GetBulkRequest, maxSize: 484, reps: 50, oids: []string{oidQFdb}, want: gosnmp.GenErr, bindings: 1},
		{name: "bulk of two columns over 1472, AES", u: aes, pdu: gosnmp.GetBulkRequest, maxSize: 1472, reps: 40,
			oids: []string{oidQFdb, "1.3.6.1.2.1.31.1.1.1.1"}, want: gosnmp.GenErr, bindings: 2},
		{name: "bulk within 484", u: aes, pdu: gosnmp.GetBulkRequest, maxSize: 484, reps: 5, oids: []string{oidQFdb}, bindings: 5},
		{name: "get over 484", u: noPriv, pdu: gosnmp.GetRequest, maxSize: 484, oids: ifNames(20), silent: true},
		{name: "getnext over 1000, AES", u: aes, pdu: gosnmp.GetNextRequest, maxSize: 1000, oids: ifNames(64), silent: true},
		{name: "get within 484", u: aes, pdu: gosnmp.GetRequest, maxSize: 484, oids: ifNames(2), bindings: 2},
		{name: "msgMaxSize 483", u: aes, pdu: gosnmp.GetRequest, maxSize: 483, oids: ifNames(1), silent: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, ok := a.answer(v3Request(t, tc.u, tc.pdu, tc.maxSize, tc.reps, tc.oids...))
			if tc.silent {
				if ok {
					t.Fatalf("answered with %d bytes, want no answer", len(out))
				}
				return
			}
			if !ok {
				t.Fatal("no answer")
			}
			if len(out) > int(tc.maxSize) {
				t.Errorf("answer of %d bytes, msgMaxSize %d", len(out), tc.maxSize)
			}
			p := decodeAnswer(t, out, tc.u)
			if p.Error != tc.want || p.ErrorIndex != 0 || len(p.Variables) != tc.bindings {
				t.Errorf("answer %v index %d with %d bindings, want %v, 0, %d", p.Error, p.ErrorIndex, len(p.Variables), tc.want, tc.bindings)
			}
			if tc.want == gosnmp.GenErr {
				var want []string
				for _, o := range tc.oids {
					want = append(want, "."+o)
				}
				if diff := cmp.Diff(want, names(p.Variables)); diff != "" {
					t.Errorf("genErr bindings are not the request's (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestV2cAnswerLongerThanADatagram: an answer no UDP datagram holds is not
// sent, as snmpd's sendto fails.
func TestV2cAnswerLongerThanADatagram(t *testing.T) {
	a := New("public")
	if err := a.Set(bigSwitch(1500)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		oids int
		fits bool
	}{
		{name: "1000 ifNames", oids: 1000, fits: true},
		{name: "1500 ifNames", oids: 1500},
	} {
		req := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.GetRequest, RequestID: 7}
		for _, o := range ifNames(tc.oids) {
			req.Variables = append(req.Variables, gosnmp.SnmpPDU{Name: "." + o, Type: gosnmp.Null})
		}
		b, err := req.MarshalMsg()
		if err != nil {
			t.Fatal(err)
		}
		if out, ok := a.answer(b); ok != tc.fits || len(out) > maxUDP {
			t.Errorf("%s: answered %v with %d bytes, want answered %v within %d", tc.name, ok, len(out), tc.fits, maxUDP)
		}
	}
}

// TestBulkRepetitionsCapped: a GETBULK gets at most 100 repetitions in all,
// each repeater as many, the non-repeaters besides (snmpd's
// maxGetbulkResponses), over loopback to gosnmp.
func TestBulkRepetitionsCapped(t *testing.T) {
	a := New("public")
	if err := a.Set(bigSwitch(1000)); err != nil {
		t.Fatal(err)
	}
	g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: serve(t, a), Version: gosnmp.Version2c, Community: "public",
		Timeout: 10 * time.Second, Retries: 0, MaxOids: 1000, Context: t.Context()}
	if err := g.Connect(); err != nil {
		t.Fatal(err)
	}
	defer g.Conn.Close()
	for _, tc := range []struct {
		name             string
		nonRep, repeater int
		reps             uint32
		want             int // bindings
	}{
		{name: "one column, 1000 asked", repeater: 1, reps: 1000, want: 100},
		{name: "one column, 25 asked", repeater: 1, reps: 25, want: 25},
		{name: "three columns", repeater: 3, reps: 50, want: 99},
		{name: "two non-repeaters and three columns", nonRep: 2, repeater: 3, reps: 50, want: 2 + 99},
		{name: "two non-repeaters and a hundred columns", nonRep: 2, repeater: 100, reps: 50, want: 2 + 100},
		{name: "more columns than 100", repeater: 800, reps: 10, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oids := ifNames(tc.nonRep + tc.repeater)
			for i := range oids {
				oids[i] = "." + oids[i]
			}
			p, err := g.GetBulk(oids, uint8(tc.nonRep), tc.reps)
			if err != nil {
				t.Fatal(err)
			}
			if p.Error != gosnmp.NoError || len(p.Variables) != tc.want {
				t.Errorf("answer %v with %d bindings, want noError with %d", p.Error, len(p.Variables), tc.want)
			}
		})
	}
}

// TestNetSNMPBulkWalkLimits: Debian's snmpbulkwalk, asking for 1,000
// repetitions, walks a table of 250 rows in answers of 100; and told to
// take answers of 484 bytes at most (snmp.conf sendMessageMaxSize) it gets
// what snmpd answers a GETBULK that does not fit, genError, and walks with
// 5 repetitions, which fit.
func TestNetSNMPBulkWalkLimits(t *testing.T) {
	bulk := testpeer.Require(t, "snmpbulkwalk")
	u := User{Name: "fabric", AuthProtocol: gosnmp.SHA, AuthPassphrase: "auth-pass-1", PrivProtocol: gosnmp.AES, PrivPassphrase: "priv-pass-1"}
	a := newTestAgent(t, Config{Community: "public", Users: []User{u}})
	if err := a.Set(bigSwitch(250)); err != nil {
		t.Fatal(err)
	}
	target := "udp:127.0.0.1:" + itoa(serve(t, a))
	out, errOut, err := netSNMP(t, bulk, "-v2c", "-c", "public", "-Cr1000", target, oidQFdb)
	if err != nil {
		t.Fatalf("snmpbulkwalk: %v\n%s", err, errOut)
	}
	if n := len(parseWalk(t, out)); n != 250 || a.Requests() != 3 {
		t.Errorf("walked %d rows in %d requests, want 250 in 3 (100, 100, 50 and the end)", n, a.Requests())
	}
	small := "sendMessageMaxSize 484\n"
	out, errOut, _ = netSNMPConf(t, small, bulk, append(v3Args(u), "-Cr50", target, oidQFdb)...)
	if !strings.Contains(errOut+out, "genError") || strings.Contains(out, " = INTEGER: ") {
		t.Errorf("-Cr50 within 484 bytes: stdout %q, stderr %q; want genError and no rows", out, errOut)
	}
	out, errOut, err = netSNMPConf(t, small, bulk, append(v3Args(u), "-Cr5", target, oidQFdb)...)
	if n := len(parseWalk(t, out)); err != nil || n != 250 {
		t.Errorf("-Cr5 within 484 bytes: %v, %d rows, want 250\n%s", err, n, errOut)
	}
}
