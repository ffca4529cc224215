// Package migrations holds HSM's database schema: numbered SQL migrations,
// applied in order when a store opens (internal/sqldb).
package migrations

import "embed"

// FS is the migrations, at its root.
//
//go:embed *.sql
var FS embed.FS
