// Package core is what HSM's resource packages (component, group, lock,
// inventory, ethernet, scn) share: the Store with the database handle, the
// group-commit pipeline (commit.go), the SCN outbox (outbox.go), the
// in-memory indexes of components (index.go), memberships (groups_index.go)
// and reservations (locks_index.go), the one component Filter (filter.go),
// the site Roles and SubRoles (hmsconfig.go), and the HTTP answer helpers
// every handler uses.
package core

import (
	"fmt"
	"net/http"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// BulkLimit caps bulk request bodies: 100,000 components fit with room to spare.
const BulkLimit = 128 << 20

// TSFormat is the fixed-width UTC time format of HSM's time columns, so that
// string order is time order.
const TSFormat = "2006-01-02T15:04:05.000000000Z"

// WriteMessage answers 200 with HMS's {"code":0,"message":msg} body.
func WriteMessage(w http.ResponseWriter, msg string) {
	httpserver.WriteJSON(w, http.StatusOK, hsm.Response{Code: 0, Message: msg})
}

// WriteDeleted answers a successful DELETE of a collection, or of the part of
// it a filter selected. HSM says "deleted %d entries" there even for one entry.
func WriteDeleted[N int | int64](w http.ResponseWriter, n N) {
	WriteMessage(w, fmt.Sprintf("deleted %d entries", n))
}

// WriteDeletedOne answers a successful DELETE of one named resource.
func WriteDeletedOne(w http.ResponseWriter) {
	WriteMessage(w, "deleted 1 entry")
}

// PathID is the {xname} path value, normalised; an invalid one is ErrInvalid.
func PathID(r *http.Request) (string, error) {
	id := r.PathValue("xname")
	if !xname.Valid(id) {
		return "", problem.Invalidf("xname: %q is not a valid xname", id)
	}
	return xname.Normalize(id), nil
}

// ParseTime reads the RFC 3339 time of query parameter name.
func ParseTime(name, v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return t, problem.Invalidf("query parameter %s: %q is not an RFC 3339 time", name, v)
	}
	return t, nil
}
