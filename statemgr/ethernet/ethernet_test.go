package ethernet_test

import (
	"cmp"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/ethernet"
	"github.com/hmsuite/hms/statemgr/hsm"
	hsmcore "github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

func TestEthernetInterfacesAPI(t *testing.T) { pg.EachDB(t, testEthernetInterfacesAPI) }

func testEthernetInterfacesAPI(t *testing.T, db testpeer.DB) {
	a := hsmtest.NewServerOn(t, db)
	body := a.Must(201, "POST", "/Inventory/EthernetInterfaces", map[string]any{
		"MACAddress": "A4:BF:01:2B:73:10", "Description": "bmc", "ComponentID": "x3000c0s1b0",
		"IPAddresses": []map[string]any{{"IPAddress": "10.254.1.5", "Network": "HMN"}}})
	if got := string(body); got != `{"URI":"/hsm/v2/Inventory/EthernetInterfaces/a4bf012b7310"}`+"\n" { // one object, as shipped
		t.Errorf("POST body %s", got)
	}
	a.Problem(400, "GET", "/Inventory/EthernetInterfaces?ComponentID=BADID", nil, "Invalid CompID.")
	a.Must(201, "POST", "/Inventory/EthernetInterfaces", map[string]any{"MACAddress": "a4:bf:01:2b:73:11", "IPAddresses": []map[string]any{{"IPAddress": "10.252.0.9"}}})
	a.Must(409, "POST", "/Inventory/EthernetInterfaces", map[string]any{"MACAddress": "a4bf012b7310"})
	a.Must(400, "POST", "/Inventory/EthernetInterfaces", map[string]any{"MACAddress": "not-a-mac"})
	a.Must(400, "POST", "/Inventory/EthernetInterfaces", map[string]any{"MACAddress": "a4bf012b7312", "ComponentID": "bogus"})
	a.Must(400, "POST", "/Inventory/EthernetInterfaces", map[string]any{"MACAddress": "a4bf012b7312", "IPAddresses": []map[string]any{{"IPAddress": "10.1"}}})

	get := func(q string) []string {
		var l []hsm.EthernetInterface
		json.Unmarshal(a.Must(200, "GET", "/Inventory/EthernetInterfaces"+q, nil), &l)
		out := []string{}
		for _, e := range l {
			out = append(out, e.ID)
		}
		return out
	}
	tests := []struct {
		q    string
		want []string
	}{
		{q: "", want: []string{"a4bf012b7310", "a4bf012b7311"}},
		{q: "?ComponentID=x3000c0s1b0", want: []string{"a4bf012b7310"}},
		{q: "?ComponentID=", want: []string{"a4bf012b7311"}},
		{q: "?Type=NodeBMC", want: []string{"a4bf012b7310"}},
		{q: "?MACAddress=a4:bf:01:2b:73:11", want: []string{"a4bf012b7311"}},
		{q: "?IPAddress=10.254.1.5", want: []string{"a4bf012b7310"}},
		{q: "?Network=HMN&Network=NMN", want: []string{"a4bf012b7310"}},
		{q: "?NewerThan=2000-01-01T00:00:00Z", want: []string{"a4bf012b7310", "a4bf012b7311"}},
		{q: "?OlderThan=2000-01-01T00:00:00Z", want: []string{}},
	}
	for _, tc := range tests {
		if diff := gocmp.Diff(tc.want, get(tc.q)); diff != "" {
			t.Errorf("GET %s (-want +got):\n%s", tc.q, diff)
		}
	}
	a.Must(400, "GET", "/Inventory/EthernetInterfaces?OlderThan=yesterday", nil)
	a.Must(200, "GET", "/Inventory/EthernetInterfaces?Colour=red", nil) // unknown parameters are ignored, as shipped HSM does

	var ei hsm.EthernetInterface
	json.Unmarshal(a.Must(200, "PATCH", "/Inventory/EthernetInterfaces/a4bf012b7311", map[string]any{"ComponentID": "x3000c0s2b0n0", "Description": "node"}), &ei)
	want := hsm.EthernetInterface{ID: "a4bf012b7311", Description: "node", MACAddress: "a4:bf:01:2b:73:11",
		IPAddresses: []hsm.IPAddressMapping{{IPAddress: "10.252.0.9"}}, ComponentID: "x3000c0s2b0n0", Type: "Node"}
	if diff := gocmp.Diff(want, ei, cmpopts.IgnoreFields(hsm.EthernetInterface{}, "LastUpdate")); diff != "" || time.Since(ei.LastUpdate) > time.Hour {
		t.Errorf("PATCH (-want +got):\n%s", diff)
	}
	a.Must(201, "POST", "/Inventory/EthernetInterfaces/a4bf012b7311/IPAddresses", map[string]any{"IPAddress": "10.100.0.2", "Network": "CAN"})
	a.Must(409, "POST", "/Inventory/EthernetInterfaces/a4bf012b7311/IPAddresses", map[string]any{"IPAddress": "10.100.0.2"})
	a.Must(200, "PATCH", "/Inventory/EthernetInterfaces/a4bf012b7311/IPAddresses/10.252.0.9", map[string]any{"Network": "NMN"})
	var ips []hsm.IPAddressMapping
	json.Unmarshal(a.Must(200, "GET", "/Inventory/EthernetInterfaces/a4bf012b7311/IPAddresses", nil), &ips)
	if diff := gocmp.Diff([]hsm.IPAddressMapping{{IPAddress: "10.100.0.2", Network: "CAN"}, {IPAddress: "10.252.0.9", Network: "NMN"}}, ips); diff != "" {
		t.Errorf("IPAddresses (-want +got):\n%s", diff)
	}
	a.Must(200, "DELETE", "/Inventory/EthernetInterfaces/a4bf012b7311/IPAddresses/10.100.0.2", nil)
	a.Must(404, "DELETE", "/Inventory/EthernetInterfaces/a4bf012b7311/IPAddresses/10.100.0.2", nil)
	a.Must(404, "PATCH", "/Inventory/EthernetInterfaces/a4bf012b7399", map[string]any{})
	a.Must(200, "DELETE", "/Inventory/EthernetInterfaces/a4bf012b7310", nil)
	a.Must(404, "GET", "/Inventory/EthernetInterfaces/a4bf012b7310", nil)
	a.Must(200, "DELETE", "/Inventory/EthernetInterfaces", nil)
	a.Must(404, "DELETE", "/Inventory/EthernetInterfaces", nil)
}

// TestPatchReadsInItsTransaction: a PATCH of one field keeps what another
// writer changed of the others while the PATCH waited for the writer. The
// test holds the writer, changes ComponentID in its transaction, and lets
// go once the PATCH waits for it; a PATCH that had read the interface
// before waiting wrote the old ComponentID back.
func TestPatchReadsInItsTransaction(t *testing.T) { pg.EachDB(t, testPatchReadsInItsTransaction) }

func testPatchReadsInItsTransaction(t *testing.T, db testpeer.DB) {
	core, _ := hsmtest.NewStoreOn(t, db, hsmcore.Config{})
	s := ethernet.NewStore(core.DB, time.Now)
	if _, err := s.Create(t.Context(), hsm.EthernetInterface{MACAddress: "02:00:00:00:00:01", ComponentID: "x1000c0s0b0n0"}); err != nil {
		t.Fatal(err)
	}
	held, release, txDone := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		txDone <- core.DB.WriteTx(t.Context(), func(tx *sql.Tx) error {
			if _, err := tx.Exec(`UPDATE eth_interfaces SET component_id = 'x1000c0s0b0n1' WHERE id = '020000000001'`); err != nil {
				return err
			}
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	waits := core.DB.W.Stats().WaitCount
	desc := "renamed"
	patched := make(chan error, 1)
	go func() {
		_, err := s.Patch(t.Context(), "020000000001", hsm.EthernetPatch{Description: &desc})
		patched <- err
	}()
	for core.DB.W.Stats().WaitCount == waits {
		runtime.Gosched() // until the PATCH waits for the writer
	}
	close(release)
	if err := <-txDone; err != nil {
		t.Fatal(err)
	}
	if err := <-patched; err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(t.Context(), "020000000001")
	if err != nil {
		t.Fatal(err)
	}
	if got.Description != desc || got.ComponentID != "x1000c0s0b0n1" {
		t.Errorf("after the PATCH: Description %q ComponentID %q, want %q and the other writer's x1000c0s0b0n1",
			got.Description, got.ComponentID, desc)
	}
}

// TestConcurrentCreates: creates sent at once share transactions, and each
// gets its own answer: created, or a conflict for a MAC taken.
func TestConcurrentCreates(t *testing.T) { pg.EachDB(t, testConcurrentCreates) }

func testConcurrentCreates(t *testing.T, db testpeer.DB) {
	core, _ := hsmtest.NewStoreOn(t, db, hsmcore.Config{})
	s := ethernet.NewStore(core.DB, time.Now)
	const n = 64
	errs := make([]error, 2*n)
	var wg sync.WaitGroup
	for i := range 2 * n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.Create(t.Context(), hsm.EthernetInterface{MACAddress: fmt.Sprintf("02:00:00:00:00:%02x", i%n),
				IPAddresses: []hsm.IPAddressMapping{{IPAddress: fmt.Sprintf("10.0.0.%d", i%n)}}})
		}()
	}
	wg.Wait()
	for i := range n {
		if a, b := errs[i], errs[i+n]; (a == nil) == (b == nil) || !errors.Is(cmp.Or(a, b), problem.ErrConflict) {
			t.Errorf("MAC %d: errors %v and %v, want one create and one conflict", i, a, b)
		}
		got, err := s.Get(t.Context(), fmt.Sprintf("0200000000%02x", i))
		if err != nil || len(got.IPAddresses) != 1 || got.IPAddresses[0].IPAddress != fmt.Sprintf("10.0.0.%d", i) {
			t.Errorf("MAC %d: %+v, %v", i, got, err)
		}
	}
}

// TestBulkCreate: the extension POST /Inventory/EthernetInterfaces/Bulk
// creates a list in one go; a list with a bad or taken MAC creates
// nothing.
func TestBulkCreate(t *testing.T) { pg.EachDB(t, testBulkCreate) }

func testBulkCreate(t *testing.T, db testpeer.DB) {
	a := hsmtest.NewServerOn(t, db)
	a.Must(204, "POST", "/Inventory/EthernetInterfaces/Bulk", []map[string]any{
		{"MACAddress": "02:00:00:00:00:01", "ComponentID": "x1000c0s0b0n0", "IPAddresses": []map[string]any{{"IPAddress": "10.1.0.1"}}},
		{"MACAddress": "02:00:00:00:00:02", "ComponentID": "x1000c0s0b0"}})
	var ei hsm.EthernetInterface
	json.Unmarshal(a.Must(200, "GET", "/Inventory/EthernetInterfaces/020000000001", nil), &ei)
	if ei.ComponentID != "x1000c0s0b0n0" || ei.Type != "Node" || len(ei.IPAddresses) != 1 || ei.IPAddresses[0].IPAddress != "10.1.0.1" {
		t.Errorf("created: %+v", ei)
	}
	for _, tt := range []struct {
		name   string
		body   []map[string]any
		status int
		detail string
	}{
		{name: "taken", body: []map[string]any{{"MACAddress": "02:00:00:00:00:03"}, {"MACAddress": "02:00:00:00:00:01"}},
			status: 409, detail: "[1].MACAddress: interface 020000000001 already exists"},
		{name: "twice", body: []map[string]any{{"MACAddress": "02:00:00:00:00:03"}, {"MACAddress": "020000000003"}},
			status: 409, detail: "[1].MACAddress: interface 020000000003 is also [0]"},
		{name: "bad MAC", body: []map[string]any{{"MACAddress": "02:00:00:00:00:03"}, {"MACAddress": "nope"}},
			status: 400, detail: "[1]: MACAddress"},
	} {
		code, body := a.Do("POST", "/Inventory/EthernetInterfaces/Bulk", tt.body)
		if code != tt.status || !strings.Contains(string(body), tt.detail) {
			t.Errorf("%s: %d %s, want %d naming %q", tt.name, code, body, tt.status, tt.detail)
		}
	}
	a.Must(404, "GET", "/Inventory/EthernetInterfaces/020000000003", nil)
}
