package orchestrator

import (
	"testing"
	"testing/fstest"

	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/internal/testpeer"
)

// TestComponentsStoredBeforeVersionsStayWritable: a component stored
// before migration 0002 (version 0) can be written after an upgrade; it
// was a 409 on every write.
func TestComponentsStoredBeforeVersionsStayWritable(t *testing.T) {
	pg.EachDB(t, testComponentsStoredBeforeVersionsStayWritable)
}

func testComponentsStoredBeforeVersionsStayWritable(t *testing.T, db testpeer.DB) {
	st := upgraded(t, db, `INSERT INTO components (id, doc) VALUES ('x3000c0s1b0n0', '{"id":"x3000c0s1b0n0","enabled":true}')`,
		"0001_init.sql", "0002_versions.sql")
	comps, err := st.Components(t.Context())
	if err != nil || len(comps) != 1 {
		t.Fatalf("components %+v, %v", comps, err)
	}
	comps[0].Enabled = false
	if err := st.SaveComponents(t.Context(), comps, nil); err != nil {
		t.Fatalf("writing a component stored before versions: %v", err)
	}
}

// TestTemplatesStoredBeforeTenantsAreNoTenants: a template stored before
// migration 0004 is no tenant's after it, and a tenant may then own a
// template of the same name.
func TestTemplatesStoredBeforeTenantsAreNoTenants(t *testing.T) {
	pg.EachDB(t, testTemplatesStoredBeforeTenantsAreNoTenants)
}

func testTemplatesStoredBeforeTenantsAreNoTenants(t *testing.T, db testpeer.DB) {
	st := upgraded(t, db, `INSERT INTO templates (name, doc) VALUES ('t1', '{"name":"t1","tenant":""}')`,
		"0001_init.sql", "0002_versions.sql", "0003_stored_versions.sql")
	if got, err := st.Template(t.Context(), "", "t1"); err != nil || got.Name != "t1" {
		t.Fatalf("t1 after the upgrade: %+v, %v", got, err)
	}
	if err := st.PutTemplate(t.Context(), Template{Name: "t1", Tenant: "vcluster-a"}); err != nil {
		t.Fatal(err)
	}
	all, err := st.Templates(t.Context(), "")
	if err != nil || len(all) != 2 {
		t.Errorf("templates %+v, %v", all, err)
	}
}

// upgraded makes a database of db at the given migrations, runs insert in
// it, and opens it as the store does now (every migration applied).
func upgraded(t *testing.T, db testpeer.DB, insert string, migrations ...string) *Store {
	t.Helper()
	path := db(t)
	old := fstest.MapFS{}
	for _, name := range migrations {
		b, err := migrationFiles.ReadFile("migrations/" + name)
		if err != nil {
			t.Fatal(err)
		}
		old[name] = &fstest.MapFile{Data: b}
	}
	odb, err := sqldb.Open(t.Context(), path, old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := odb.W.ExecContext(t.Context(), insert); err != nil {
		t.Fatal(err)
	}
	odb.Close()
	return openStore(t, path)
}
