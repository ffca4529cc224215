// Package testpeer lets tests that need a real third-party program (kcat,
// redfishtool, snmpd, ...) find it: the test skips when the program is missing on
// a developer machine, and fails when CI=true, where `make test` installs it.
// Postgres runs a PostgreSQL server for a package's tests the same way.
package testpeer

import (
	"os"
	"os/exec"
	"testing"
)

// Require returns the path of the named program or stops the test.
func Require(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("test peer %s missing under CI=true (make peers installs it): %v", name, err)
	}
	t.Skipf("test peer %s not installed (run `make peers` as root)", name)
	return ""
}
