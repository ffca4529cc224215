package sim

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gosnmp/gosnmp"

	"github.com/hmsuite/hms/discovery"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/snmpsim"
	slsclient "github.com/hmsuite/hms/layout/client"
	"github.com/hmsuite/hms/layout/sls"
)

// TestPlaces: device i's xnames, switch port and switch address follow
// slsgen's shape from x3000, and parsePlace reads them back.
func TestPlaces(t *testing.T) {
	for _, tc := range []struct {
		i                 int
		bmc, sw, port, ip string
	}{
		{i: 0, bmc: "x3000c0s1b0", sw: "x3000c0w1", port: "ethernet1/1/1", ip: "127.21.0.1"},
		{i: 1, bmc: "x3000c0s1b1", sw: "x3000c0w1", port: "ethernet1/1/2", ip: "127.21.0.1"},
		{i: 31, bmc: "x3000c0s16b1", sw: "x3000c0w1", port: "ethernet1/1/32", ip: "127.21.0.1"},
		{i: 32, bmc: "x3000c1s1b0", sw: "x3000c1w1", port: "ethernet1/1/1", ip: "127.21.0.2"},
		{i: 128, bmc: "x3001c0s1b0", sw: "x3001c0w1", port: "ethernet1/1/1", ip: "127.21.1.1"},
		{i: 256 * 128, bmc: "x3256c0s1b0", sw: "x3256c0w1", port: "ethernet1/1/1", ip: "127.22.0.1"},
	} {
		p := placeOf(tc.i)
		if p.bmcX() != tc.bmc || p.switchX() != tc.sw || p.portName() != tc.port || p.switchAddr().String() != tc.ip {
			t.Errorf("device %d: %s %s %s %s, want %s %s %s %s", tc.i, p.bmcX(), p.switchX(), p.portName(), p.switchAddr(),
				tc.bmc, tc.sw, tc.port, tc.ip)
		}
		for _, x := range []string{tc.bmc, tc.bmc + "n0"} {
			if q, err := parsePlace(x); err != nil || q != p {
				t.Errorf("parsePlace(%s) = %+v, %v; want %+v", x, q, err, p)
			}
		}
	}
	for _, bad := range []string{"", "x3000", "x3000c0s1b0n1", "x999c0s1b0", "x3000c4s1b0", "x3000c0s17b0", "x3000c0s1b2", "x3000c0s01b0", "x3000c0s1b0junk"} {
		if _, err := parsePlace(bad); !errors.Is(err, problem.ErrInvalid) {
			t.Errorf("parsePlace(%q) = %v, want invalid", bad, err)
		}
	}
}

// TestMountainPlaces: a Mountain shape lists each chassis's controller and
// its node cards, with the MACs MEDS expects for them, and parsePlace reads
// every xname back.
func TestMountainPlaces(t *testing.T) {
	var got []string
	for _, p := range (Mountain{Cabinets: 1, Chassis: 2, Slots: 1}).places() {
		got = append(got, p.bmcX())
		xs := []string{p.bmcX()}
		if p.kind != chassisBMC {
			xs = append(xs, p.nodeX())
		}
		for _, x := range xs {
			if q, err := parsePlace(x); err != nil || q != p {
				t.Errorf("parsePlace(%s) = %+v, %v; want %+v", x, q, err, p)
			}
		}
		mac, err := mountainMAC(p)
		if err != nil {
			t.Fatal(err)
		}
		want := ""
		for _, e := range discovery.MountainEndpoints("", p.cabinet, p.chassis) {
			if e.Xname == p.bmcX() {
				want = e.MAC
			}
		}
		if mac.String() != want {
			t.Errorf("%s: MAC %s, MEDS expects %s", p.bmcX(), mac, want)
		}
	}
	want := []string{"x1000c0b0", "x1000c0s0b0", "x1000c0s0b1", "x1000c1b0", "x1000c1s0b0", "x1000c1s0b1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("places (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"x1000c0b1", "x1000c0b0n0", "x1000c8b0", "x1000c0s8b0", "x1000c0s0b2", "x1000c0s0b0n1", "x1000c00b0", "x1000c0r0b0"} {
		if _, err := parsePlace(bad); !errors.Is(err, problem.ErrInvalid) {
			t.Errorf("parsePlace(%q) = %v, want invalid", bad, err)
		}
	}
	for _, m := range []Mountain{{Cabinets: 1, Chassis: 0, Slots: 1}, {Cabinets: 1, Chassis: 9}, {Cabinets: 1, Chassis: 1, Slots: 9}, {Cabinets: -1}} {
		if err := m.Validate(); !errors.Is(err, problem.ErrInvalid) {
			t.Errorf("%+v: %v, want invalid", m, err)
		}
	}
}

// TestWriteLayoutBulk: the layout goes to SLS in one bulk PUT; an SLS
// without the bulk extension (405, as a shipped one answers) gets every
// object PUT one by one instead.
func TestWriteLayoutBulk(t *testing.T) {
	devs := []Status{{BMC: "x3000c0s1b0", NID: 1}, {BMC: "x3000c0s1b1", NID: 2}}
	const objects = 3 + 2*4 // the chassis's cabinet, chassis and switch; per BMC slot, BMC, node, connector
	for _, tc := range []struct {
		name      string
		bulk      int // status of PUT /v1/bulk/hardware
		wantBulk  int
		wantPuts  int
		wantTotal int
	}{
		{name: "bulk", bulk: http.StatusNoContent, wantBulk: 1, wantTotal: objects},
		{name: "no bulk route", bulk: http.StatusMethodNotAllowed, wantBulk: 1, wantPuts: objects, wantTotal: objects},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var bulks, puts, total int
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case r.Method == http.MethodPut && r.URL.Path == "/v1/bulk/hardware":
					bulks++
					var hs []sls.Hardware
					if err := json.NewDecoder(r.Body).Decode(&hs); err != nil {
						t.Error(err)
					}
					if tc.bulk == http.StatusNoContent {
						total += len(hs)
					}
					w.WriteHeader(tc.bulk)
				case r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/v1/hardware/"):
					puts++
					total++
					w.Header().Set("Content-Type", "application/json")
					io.Copy(w, r.Body)
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			s := &Sim{cfg: Config{SNMPPort: 1161}, sls: slsclient.New(srv.URL, srv.Client())}
			if err := s.writeLayout(t.Context(), devs); err != nil {
				t.Fatal(err)
			}
			if bulks != tc.wantBulk || puts != tc.wantPuts || total != tc.wantTotal {
				t.Errorf("%d bulk PUTs, %d single PUTs, %d objects written; want %d, %d, %d",
					bulks, puts, total, tc.wantBulk, tc.wantPuts, tc.wantTotal)
			}
		})
	}
}

// TestSwitchSNMPv3: with a v3 user the switch's SLS object carries its
// credentials as CSM's SLS does (authNoPriv: no privacy fields); without,
// none, and reds walks it with its v2c community.
func TestSwitchSNMPv3(t *testing.T) {
	p := placeOf(0)
	for _, tc := range []struct {
		name string
		u    snmpsim.User
		want sls.SwitchProps
	}{
		{name: "v2c", want: sls.SwitchProps{}},
		{name: "authPriv", u: snmpsim.User{Name: "hms-sim", AuthProtocol: gosnmp.SHA256, AuthPassphrase: "auth-pass-1",
			PrivProtocol: gosnmp.AES, PrivPassphrase: "priv-pass-1"},
			want: sls.SwitchProps{SNMPUsername: "hms-sim", SNMPAuthProtocol: "SHA256", SNMPAuthPassword: "auth-pass-1",
				SNMPPrivProtocol: "AES", SNMPPrivPassword: "priv-pass-1"}},
		{name: "authNoPriv", u: snmpsim.User{Name: "hms-sim", AuthProtocol: gosnmp.MD5, AuthPassphrase: "auth-pass-1", PrivProtocol: gosnmp.NoPriv},
			want: sls.SwitchProps{SNMPUsername: "hms-sim", SNMPAuthProtocol: "MD5", SNMPAuthPassword: "auth-pass-1"}},
	} {
		hs := chassisHardware(p, "127.21.0.1:1161", tc.u)
		got, err := hs[len(hs)-1].Switch()
		if err != nil {
			t.Fatal(err)
		}
		got.IP4addr, got.Brand, got.Model, got.Aliases = "", "", "", nil
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: switch props (-want +got):\n%s", tc.name, diff)
		}
	}
}
