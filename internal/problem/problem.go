// Package problem holds the suite's small set of error kinds and writes them as
// RFC 9457 (formerly RFC 7807) application/problem+json responses, with the field
// names HMS clients parse: type, title, status, detail, instance.
//
// Domain code classifies failures by wrapping one of the kind sentinels
// (ErrInvalid, ErrNotFound, ErrConflict, ErrUnavailable) with %w; handlers pass the
// error to Write, which is the only place an error kind becomes an HTTP status.
package problem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
)

// The error kinds. Check them with errors.Is.
var (
	// ErrInvalid means the caller sent something malformed or out of range (400).
	ErrInvalid = errors.New("invalid")
	// ErrNotFound means the named object does not exist (404).
	ErrNotFound = errors.New("not found")
	// ErrConflict means the request collides with stored state (409).
	ErrConflict = errors.New("conflict")
	// ErrUnavailable means a dependency is down or the service is shutting down (503).
	ErrUnavailable = errors.New("unavailable")
	// ErrTooLarge means the request body is over the size limit (413).
	ErrTooLarge = errors.New("request body too large")
	// ErrTimeout means the client did not send its request body in time (408).
	ErrTimeout = errors.New("request timeout")
)

// kindError attaches a kind to a message without putting the kind's own text in it.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

// Invalidf returns an ErrInvalid error whose message is the formatted text.
func Invalidf(format string, args ...any) error {
	return &kindError{kind: ErrInvalid, msg: fmt.Sprintf(format, args...)}
}

// NotFoundf returns an ErrNotFound error whose message is the formatted text.
func NotFoundf(format string, args ...any) error {
	return &kindError{kind: ErrNotFound, msg: fmt.Sprintf(format, args...)}
}

// Conflictf returns an ErrConflict error whose message is the formatted text.
func Conflictf(format string, args ...any) error {
	return &kindError{kind: ErrConflict, msg: fmt.Sprintf(format, args...)}
}

// Unavailablef returns an ErrUnavailable error whose message is the formatted text.
func Unavailablef(format string, args ...any) error {
	return &kindError{kind: ErrUnavailable, msg: fmt.Sprintf(format, args...)}
}

// Details is the problem+json document. The field order is the shipped
// services' (hms-base ProblemDetails: type, title, detail, instance, status),
// so bodies compare byte for byte with theirs.
type Details struct {
	Type     string `json:"type"`
	Title    string `json:"title,omitempty"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`
	Status   int    `json:"status,omitempty"`
}

// ContentType is the media type of a problem document.
const ContentType = "application/problem+json"

// Status maps an error to its HTTP status code.
func Status(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrConflict):
		return http.StatusConflict
	case errors.Is(err, ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrTimeout):
		return http.StatusRequestTimeout
	case errors.Is(err, ErrUnavailable):
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// Write sends err as a problem+json response, in the Style the request's
// context carries (WithStyle), else the one its response writer carries
// (StyleCarrier), else the zero Style. Client errors carry the error text
// as detail; server errors get a generic detail and are logged once here.
func Write(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	styleOf(w, r).Write(w, r, log, err)
}

// WriteStatus sends a problem+json response with an explicit status and
// detail, in the Style of the request (as Write finds it).
func WriteStatus(w http.ResponseWriter, r *http.Request, status int, detail string) {
	styleOf(w, r).WriteStatus(w, r, status, detail)
}

type styleKey struct{}

// WithStyle returns ctx carrying s, so that Write and WriteStatus shape the
// problems of a request with that context in s: a service sets its style
// once (httpserver.Mux does) rather than at every call site.
func WithStyle(ctx context.Context, s Style) context.Context {
	return context.WithValue(ctx, styleKey{}, s)
}

// StyleCarrier is a response writer that carries the Style of the request
// it answers (nil: none). httpserver's server wraps every response in one
// and its Mux sets its style there: putting the style in the request's
// context costs a copy of every request (http.Request.WithContext).
// Write finds it through writers that have an Unwrap method, as
// http.ResponseController does.
type StyleCarrier interface {
	ProblemStyle() *Style
}

// styleOf is the Style of a request: its context's, else its writer's.
func styleOf(w http.ResponseWriter, r *http.Request) Style {
	if s, ok := r.Context().Value(styleKey{}).(Style); ok {
		return s
	}
	for w != nil {
		if c, ok := w.(StyleCarrier); ok {
			if s := c.ProblemStyle(); s != nil {
				return *s
			}
			break
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	return Style{}
}

// Style is how one service shapes its problem documents: the shipped
// services differ in whether they carry an instance and in their titles,
// and operators' scripts match on both. The zero Style gives Go's status
// text as title and the request path as instance.
type Style struct {
	// NoInstance omits instance (HSM, and SLS's hardware routes).
	NoInstance bool
	// Instance, when set, computes the instance from the request (hmnfd
	// names the resource without its version).
	Instance func(r *http.Request) string
	// Titles overrides the title of some statuses (hmnfd: "Invalid Request"
	// for 400).
	Titles map[int]string
}

// Write is the package's Write in this style.
func (s Style) Write(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	status := Status(err)
	detail := err.Error()
	if status >= 500 && status != http.StatusServiceUnavailable {
		if log != nil {
			log.ErrorContext(r.Context(), "request_failed", "method", r.Method, "path", r.URL.Path, "err", err)
		}
		detail = "internal error; see the service log"
	}
	s.WriteStatus(w, r, status, detail)
}

// WriteStatus is the package's WriteStatus in this style.
func (s Style) WriteStatus(w http.ResponseWriter, r *http.Request, status int, detail string) {
	d := Details{Type: "about:blank", Title: s.Titles[status], Status: status, Detail: detail}
	if d.Title == "" {
		d.Title = http.StatusText(status)
	}
	switch {
	case s.Instance != nil:
		d.Instance = s.Instance(r)
	case !s.NoInstance:
		d.Instance = r.URL.Path
	}
	WriteDetails(w, d)
}

// WriteDetails sends d as it is.
func WriteDetails(w http.ResponseWriter, d Details) {
	w.Header().Set("Content-Type", ContentType)
	w.WriteHeader(d.Status)
	_ = json.NewEncoder(w).Encode(d)
}

// FromStatus is the inverse of Status, for clients: it returns an error of the
// kind an HTTP status stands for, with msg as its text. Statuses without a kind
// (5xx other than 503, unexpected codes) come back as ErrUnavailable, since the
// peer could not serve the request.
func FromStatus(status int, msg string) error {
	var kind error
	switch status {
	case http.StatusBadRequest:
		kind = ErrInvalid
	case http.StatusNotFound:
		kind = ErrNotFound
	case http.StatusConflict:
		kind = ErrConflict
	case http.StatusRequestEntityTooLarge:
		kind = ErrTooLarge
	case http.StatusRequestTimeout:
		kind = ErrTimeout
	default:
		kind = ErrUnavailable
	}
	return &kindError{kind: kind, msg: msg}
}
