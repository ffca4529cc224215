package hsmtest

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/migrations"
)

// NewStoreOn opens the shared core over HSM's migrations on a new database
// of db, closed at cleanup, and returns it with the database's path or URL.
func NewStoreOn(t testing.TB, db testpeer.DB, cfg core.Config) (*core.Store, string) {
	t.Helper()
	path := db(t)
	s, err := core.Open(t.Context(), path, migrations.FS, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// NewServerOn serves the API over a new store on db.
func NewServerOn(t testing.TB, db testpeer.DB) *Server {
	t.Helper()
	return NewServerWithOn(t, db, core.Config{})
}

// NewServerWithOn serves the API over a new store on db opened with cfg.
func NewServerWithOn(t testing.TB, db testpeer.DB, cfg core.Config) *Server {
	t.Helper()
	s, _ := NewStoreOn(t, db, cfg)
	return Serve(t, s)
}

// OpenAPIOn opens a store on a new database of db and serves its API.
func OpenAPIOn(t testing.TB, db testpeer.DB, now func() time.Time) (*core.Store, *httptest.Server) {
	t.Helper()
	s, _ := NewStoreOn(t, db, core.Config{Now: now})
	srv := httptest.NewServer(Mux(s))
	t.Cleanup(srv.Close)
	return s, srv
}

// Reopen closes s and opens its database again, as a restarted daemon
// does (closed at cleanup). PostgreSQL's advisory lock admits one store
// per database, so the first must be closed before the second opens.
func Reopen(t testing.TB, s *core.Store, cfg core.Config) *core.Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := core.Open(t.Context(), s.DB.Path, migrations.FS, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Close() })
	return s2
}
