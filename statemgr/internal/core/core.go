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
	"log/slog"
	"net/http"
	"strconv"
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

// WriteRawJSON sends an encoded JSON body with status 200.
func WriteRawJSON(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

// QueryFilter parses the filters named in params from r's query string.
// Parameters neither in params nor in other are ignored, as shipped HSM
// ignores them, and logged at debug level. A bad value of a known filter is
// ErrInvalid "bad query param: <HSM's text>" (hms-messages 1.3).
func QueryFilter(r *http.Request, log *slog.Logger, vocab *Vocab, params []string, other ...string) (Filter, error) {
	f, unknown, err := parseQuery(r.URL.Query(), vocab, params, other...)
	LogIgnored(r, log, unknown)
	if err != nil {
		return f, problem.Invalidf("bad query param: %v", err)
	}
	return f, nil
}

// LogIgnored logs, at debug level, the query parameters a listing ignored.
func LogIgnored(r *http.Request, log *slog.Logger, unknown []string) {
	if len(unknown) > 0 {
		log.DebugContext(r.Context(), "query_params_ignored", "path", r.URL.Path, "params", unknown)
	}
}
