package httpserver

import (
	"fmt"
	"io/fs"
	"net/http"

	"github.com/hmsuite/hms/internal/problem"
)

// OpenAPI serves the file name of fsys, the daemon's own OpenAPI document
// (embedded in its binary), as application/yaml.
func OpenAPI(fsys fs.FS, name string) http.HandlerFunc {
	doc, err := fs.ReadFile(fsys, name)
	return func(w http.ResponseWriter, r *http.Request) {
		if err != nil {
			problem.Write(w, r, nil, fmt.Errorf("openapi document: %w", err))
			return
		}
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(doc)
	}
}
