package sqldb

import (
	"database/sql"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestInsertCappedKeepsTheNewestRows(t *testing.T) {
	migs := fstest.MapFS{"0001_log.sql": {Data: []byte(`CREATE TABLE log (id INTEGER PRIMARY KEY, msg TEXT NOT NULL);`)}}
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "t.db"), migs)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, msg := range []string{"a", "b", "c", "d", "e"} {
		err := db.WriteTx(t.Context(), func(tx *sql.Tx) error {
			return InsertCapped(t.Context(), tx, "log", 3, `INSERT INTO log (msg) VALUES (?)`, msg)
		})
		if err != nil {
			t.Fatalf("insert %s: %v", msg, err)
		}
	}
	rows, err := db.R.QueryContext(t.Context(), `SELECT id, msg FROM log ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type row struct {
		ID  int64
		Msg string
	}
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.ID, &r.Msg); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []row{{ID: 3, Msg: "c"}, {ID: 4, Msg: "d"}, {ID: 5, Msg: "e"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows kept (-want +got):\n%s", diff)
	}
}
