package httpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/hmsuite/hms/internal/problem"
)

// DefaultBodyLimit caps request bodies unless a handler asks for more.
const DefaultBodyLimit = 8 << 20

// WriteJSON sends v as JSON with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ReadJSON decodes the request body into v, refusing bodies over limit bytes
// (DefaultBodyLimit when limit <= 0), trailing data, invalid UTF-8 and
// duplicate object keys (CheckJSON). Errors are ErrInvalid or ErrTooLarge
// with a message that names the problem (and the field, for type errors).
func ReadJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if limit <= 0 {
		limit = DefaultBodyLimit
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 && r.ContentLength <= limit {
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit)); err != nil {
		return DecodeError(err)
	}
	return DecodeJSON(buf.Bytes(), v)
}

// DecodeError turns a json decoding error into a kinded error with a clear message.
func DecodeError(err error) error {
	var (
		mbe *http.MaxBytesError
		ute *json.UnmarshalTypeError
		se  *json.SyntaxError
	)
	switch {
	case isBodyTimeout(err):
		return fmt.Errorf("request body not received within the read deadline: %w", problem.ErrTimeout)
	case errors.As(err, &mbe):
		return fmt.Errorf("request body over %d bytes: %w", mbe.Limit, problem.ErrTooLarge)
	case errors.As(err, &ute):
		field := ute.Field
		if field == "" {
			field = "(top level)"
		}
		return problem.Invalidf("field %s: expected %s, got JSON %s", field, ute.Type.String(), ute.Value)
	case errors.As(err, &se):
		return problem.Invalidf("request body: malformed JSON at byte %d: %v", se.Offset, se)
	case errors.Is(err, io.EOF):
		return problem.Invalidf("request body: empty, expected JSON")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return problem.Invalidf("request body: truncated JSON")
	default:
		return problem.Invalidf("request body: %v", err)
	}
}

func writeUnavailable(w http.ResponseWriter, r *http.Request, err error) {
	problem.WriteStatus(w, r, http.StatusServiceUnavailable, err.Error())
}
