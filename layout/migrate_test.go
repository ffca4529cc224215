package layout

import (
	"io/fs"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/hmsuite/hms/internal/sqldb"
)

// TestMicrosecondMigration: a database written before times had
// microseconds (seconds in hardware and networks, nanoseconds in version)
// reads back the same instants after migration 0002.
func TestMicrosecondMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sls.db")
	first, err := fs.ReadFile(migrationFiles, "migrations/0001_layout.sql")
	if err != nil {
		t.Fatal(err)
	}
	old, err := sqldb.Open(t.Context(), path, fstest.MapFS{"0001_layout.sql": {Data: first}})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, q := range []string{
		`INSERT INTO hardware (xname, parent, type, class, last_updated) VALUES ('x3000', 's0', 'comptype_cabinet', 'River', ?)`,
		`INSERT INTO networks (name, doc, last_updated) VALUES ('HMN', '{"Name":"HMN","Type":"ethernet"}', ?)`,
	} {
		if _, err := old.W.ExecContext(t.Context(), q, at.Unix()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := old.W.ExecContext(t.Context(), `UPDATE version SET counter = 2, last_updated = ?`, at.Add(123456789).UnixNano()); err != nil {
		t.Fatal(err)
	}
	old.Close()

	s := openTestStore(t, path, testNow)
	h, ok := s.GetHardware("x3000")
	if !ok || h.LastUpdated != at.Unix() || h.LastUpdatedTime != "2025-01-02 03:04:05 +0000 UTC" {
		t.Errorf("hardware after migration: %+v", h)
	}
	n, err := s.GetNetwork(t.Context(), "HMN")
	if err != nil || n.LastUpdated != at.Unix() || n.LastUpdatedTime != "2025-01-02 03:04:05 +0000 UTC" {
		t.Errorf("network after migration: %+v, %v", n, err)
	}
	if v := s.Version(); v.Counter != 2 || v.LastUpdated != "2025-01-02T03:04:05.123456Z" {
		t.Errorf("version after migration: %+v", v)
	}
}
