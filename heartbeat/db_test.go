package heartbeat

import (
	"testing"

	"github.com/hmsuite/hms/internal/testpeer"
)

// pg is the package's PostgreSQL server, started by the first test that
// asks for a database on it (pg.EachDB).
var pg = testpeer.NewPostgres()

func TestMain(m *testing.M) { pg.Main(m) }
