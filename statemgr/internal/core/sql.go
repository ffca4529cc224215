package core

import (
	"context"
	"database/sql"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
)

// Xnames parses and normalises a list of component IDs, dropping duplicates.
func Xnames(field string, ids []string) ([]string, error) {
	out := make([]string, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for i, id := range ids {
		x, err := xname.Parse(id)
		if err != nil {
			return nil, problem.Invalidf("%s[%d]: %v", field, i, err)
		}
		if s := x.String(); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out, nil
}

// Queryer is what *sql.DB and *sql.Tx have in common for reads.
type Queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Chunks splits ids into slices of at most chunkSize values.
func Chunks(ids []string) [][]string {
	var out [][]string
	for len(ids) > chunkSize {
		out = append(out, ids[:chunkSize])
		ids = ids[chunkSize:]
	}
	if len(ids) > 0 {
		out = append(out, ids)
	}
	return out
}

func Args(prefix []any, ids []string) []any {
	args := append(make([]any, 0, len(prefix)+len(ids)), prefix...)
	for _, id := range ids {
		args = append(args, id)
	}
	return args
}

// Placeholders returns n comma-separated SQL placeholders.
func Placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// chunkSize bounds the number of values in one SQL IN list.
const chunkSize = 500
