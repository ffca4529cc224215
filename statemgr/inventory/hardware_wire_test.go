package inventory

import (
	"io/fs"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/statemgr/migrations"
)

// TestHWInvShippedNamesMigrated: bodies stored before migration 0016 (FRU
// subtype as FRUSubtype or absent, HSN NICs as HSNNIC) are served with the
// shipped HSM's names after it.
func TestHWInvShippedNamesMigrated(t *testing.T) {
	db, path := openBefore(t, "0016")
	const nicFRU = `{"FRUID":"NIC-1","Type":"NodeHsnNic","FRUSubtype":"CX5","HWInventoryByFRUType":"HWInvByFRUHSNNIC","HSNNICFRUInfo":{}}`
	const nicLoc = `{"ID":"x3000c0s1b0n0h0","Type":"NodeHsnNic","Ordinal":0,"Status":"Populated",` +
		`"HWInventoryByLocationType":"HWInvByLocHSNNIC","HSNNICLocationInfo":{},"PopulatedFRU":` + nicFRU + `}`
	const memFRU = `{"FRUID":"MEM-1","Type":"Memory","HWInventoryByFRUType":"HWInvByFRUMemory","MemoryFRUInfo":{}}`
	for _, q := range []string{
		`INSERT INTO rf_hw_frus (fru_id, type, body) VALUES ('NIC-1', 'NodeHsnNic', '` + nicFRU + `'), ('MEM-1', 'Memory', '` + memFRU + `')`,
		`INSERT INTO rf_hw_locations (id, type, redfish_ep, fru_id, body) VALUES ('x3000c0s1b0n0h0', 'NodeHsnNic', '', 'NIC-1', '` + nicLoc + `')`,
	} {
		if _, err := db.W.ExecContext(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	e := rfEnvAt(t, path, nil)
	const wantNIC = `{"FRUID":"NIC-1","Type":"NodeHsnNic","HWInventoryByFRUType":"HWInvByFRUNodeHsnNic","HSNNICFRUInfo":{},"Subtype":"CX5"}`
	for path, want := range map[string]string{
		"/Inventory/HardwareByFRU/NIC-1": wantNIC,
		"/Inventory/HardwareByFRU/MEM-1": `{"FRUID":"MEM-1","Type":"Memory","HWInventoryByFRUType":"HWInvByFRUMemory","MemoryFRUInfo":{},"Subtype":""}`,
		"/Inventory/Hardware/x3000c0s1b0n0h0": `{"ID":"x3000c0s1b0n0h0","Type":"NodeHsnNic","Ordinal":0,"Status":"Populated",` +
			`"HWInventoryByLocationType":"HWInvByLocNodeHsnNic","HSNNICLocationInfo":{},"PopulatedFRU":` + wantNIC + `}`,
	} {
		if got := string(e.Must(200, "GET", path, nil)); got != want+"\n" {
			t.Errorf("GET %s:\n got %s\nwant %s", path, got, want)
		}
	}
}

// openBefore opens a new HSM database with only the migrations numbered
// below first applied, to store rows as an older hsm did.
func openBefore(t *testing.T, first string) (*sqldb.DB, string) {
	t.Helper()
	old := fstest.MapFS{}
	files, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := filepath.Base(f); name < first {
			b, _ := migrations.FS.ReadFile(f)
			old[name] = &fstest.MapFile{Data: b}
		}
	}
	path := filepath.Join(t.TempDir(), "hsm.db")
	db, err := sqldb.Open(t.Context(), path, old)
	if err != nil {
		t.Fatal(err)
	}
	return db, path
}
