// Package routetest checks, in a daemon's tests, that its OpenAPI document
// and its router agree: every documented operation reaches a registered
// route with its method, and every registered route is documented.
package routetest

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/httpserver"
)

// Operation is one documented method and path template.
type Operation struct{ Method, Path string }

// Operations lists the operations of an OpenAPI document in the layout the
// suite's documents use: each path a two-space-indented key of `paths:`,
// each method a four-space-indented key under it.
func Operations(doc []byte) ([]Operation, error) {
	var (
		ops     []Operation
		inPaths bool
		path    string
	)
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#"):
		case !strings.HasPrefix(line, " "):
			inPaths = line == "paths:"
		case !inPaths:
		case strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   "):
			key, _, _ := strings.Cut(strings.TrimSpace(line), ":")
			path = strings.Trim(key, `"'`)
			if !strings.HasPrefix(path, "/") {
				return nil, fmt.Errorf("paths: key %q is not a path", path)
			}
		case strings.HasPrefix(line, "    ") && !strings.HasPrefix(line, "     "):
			key, _, _ := strings.Cut(strings.TrimSpace(line), ":")
			if slices.Contains([]string{"get", "head", "post", "put", "patch", "delete"}, key) {
				ops = append(ops, Operation{Method: strings.ToUpper(key), Path: path})
			}
		}
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("no operations under paths:")
	}
	return ops, nil
}

var param = regexp.MustCompile(`\{[^}]+\}`)

// Check fails t unless doc and mux agree (see the package comment).
func Check(t *testing.T, mux *httpserver.Mux, doc []byte) {
	t.Helper()
	for _, p := range Diff(mux, doc) {
		t.Error(p)
	}
}

// Diff lists where doc and mux disagree. Path parameters of the document
// are filled with a sample value to route them. A pattern without a method
// (a daemon's own answer to the methods a path does not take) needs no
// operation of its own when a pattern with a method has its path.
func Diff(mux *httpserver.Mux, doc []byte) []string {
	ops, err := Operations(doc)
	if err != nil {
		return []string{"OpenAPI document: " + err.Error()}
	}
	var out []string
	covered := map[string]bool{}
	for _, op := range ops {
		path := param.ReplaceAllString(op.Path, "x1000c0s0b0n0")
		pattern := mux.Match(httptest.NewRequest(op.Method, path, nil))
		method, patPath, hasMethod := strings.Cut(pattern, " ")
		if pattern == "" || (hasMethod && method != op.Method) {
			out = append(out, fmt.Sprintf("documented %s %s reaches no route", op.Method, op.Path))
			continue
		}
		covered[pattern] = true
		if hasMethod {
			covered[patPath] = true
		}
	}
	for _, p := range mux.Patterns() {
		if !covered[p] {
			out = append(out, fmt.Sprintf("route %q is not in the OpenAPI document", p))
		}
	}
	return out
}
