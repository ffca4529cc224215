// Command naive-durable is the ceiling hsm's single-component PATCH is
// compared with (issue 20): the naive durable write. Each PATCH
// /hsm/v2/State/Components/{xname}/StateData decodes {"State": ...} and
// commits one row to SQLite in its own transaction, with the same
// durability settings as the suite's databases (WAL, synchronous=FULL, one
// writer connection; see internal/sqldb). It does no validation, no index,
// no outbox and no SCN: whatever hsm does beyond that is paid for by group
// commit, so hsm should beat it (target >= 1.5x).
package main

import (
	"database/sql"
	"encoding/json"
	"flag"
	"log"
	"net/http"
	"net/url"
	"strings"

	_ "modernc.org/sqlite"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:28598", "HOST:PORT to serve on")
	dbPath := flag.String("db", "naive.db", "SQLite file")
	flag.Parse()
	q := url.Values{}
	for _, pr := range []string{"journal_mode(WAL)", "busy_timeout(10000)", "synchronous(FULL)", "cache_size(-65536)"} {
		q.Add("_pragma", pr)
	}
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+*dbPath+"?"+q.Encode())
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS components (id TEXT PRIMARY KEY, state TEXT NOT NULL)`); err != nil {
		log.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/hsm/v2/State/Components/"), "/StateData")
		var body struct{ State string }
		if !ok || r.Method != http.MethodPatch || json.NewDecoder(r.Body).Decode(&body) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if err := commit(db, id, body.State); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	log.Fatal(http.ListenAndServe(*listen, h))
}

// commit writes one row in its own transaction: one fsync per request.
func commit(db *sql.DB, id, state string) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	if _, err := tx.Exec(`INSERT INTO components (id, state) VALUES (?, ?)
		ON CONFLICT (id) DO UPDATE SET state = excluded.state`, id, state); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}
