package problem

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriteMapsKindsToStatus(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantDetail string
	}{
		{name: "invalid", err: Invalidf("field %s: bad", "Class"), wantStatus: 400, wantDetail: "field Class: bad"},
		{name: "wrapped not found", err: fmt.Errorf("get x1: %w", NotFoundf("no such xname x1")), wantStatus: 404, wantDetail: "get x1: no such xname x1"},
		{name: "conflict", err: Conflictf("x1 exists"), wantStatus: 409, wantDetail: "x1 exists"},
		{name: "too large", err: fmt.Errorf("body: %w", ErrTooLarge), wantStatus: 413, wantDetail: "body: request body too large"},
		{name: "unavailable", err: Unavailablef("hsm down"), wantStatus: 503, wantDetail: "hsm down"},
		{name: "internal hides detail", err: errors.New("disk I/O error at /var/lib/secret"), wantStatus: 500, wantDetail: "internal error; see the service log"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Write(rec, httptest.NewRequest("GET", "/v1/hardware/x1", nil), nil, tt.err)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d", rec.Code, tt.wantStatus)
			}
			if ct := rec.Header().Get("Content-Type"); ct != ContentType {
				t.Fatalf("content type = %q", ct)
			}
			var got Details
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			want := Details{Type: "about:blank", Title: http.StatusText(tt.wantStatus), Status: tt.wantStatus, Detail: tt.wantDetail, Instance: "/v1/hardware/x1"}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("problem (-want +got):\n%s", d)
			}
		})
	}
}

// TestStyleBodies pins the bytes: the shipped field order (type, title,
// detail, instance, status), the trailing newline, and each style's
// instance and title.
func TestStyleBodies(t *testing.T) {
	hmnfd := Style{Titles: map[int]string{400: "Invalid Request"}, Instance: func(r *http.Request) string { return "/params" }}
	tests := []struct {
		name  string
		style Style
		want  string
	}{
		{name: "default", style: Style{}, want: `{"type":"about:blank","title":"Bad Request","detail":"bad","instance":"/hmi/v1/params","status":400}` + "\n"},
		{name: "no instance", style: Style{NoInstance: true}, want: `{"type":"about:blank","title":"Bad Request","detail":"bad","status":400}` + "\n"},
		{name: "hmnfd", style: hmnfd, want: `{"type":"about:blank","title":"Invalid Request","detail":"bad","instance":"/params","status":400}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			tt.style.Write(rec, httptest.NewRequest("PATCH", "/hmi/v1/params", nil), nil, Invalidf("bad"))
			if got := rec.Body.String(); got != tt.want {
				t.Fatalf("body\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// carrier is a response writer carrying a Style, as httpserver's is.
type carrier struct {
	http.ResponseWriter
	style *Style
}

func (c *carrier) ProblemStyle() *Style { return c.style }

// wrapper wraps a writer and says so, as http.ResponseController expects.
type wrapper struct{ http.ResponseWriter }

func (w wrapper) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestStyleFromWriter: Write takes the style a StyleCarrier writer carries,
// also through writers that Unwrap to it; a style in the request's context
// comes first.
func TestStyleFromWriter(t *testing.T) {
	noInstance := &Style{NoInstance: true}
	titled := Style{Titles: map[int]string{400: "Context"}}
	tests := []struct {
		name string
		w    func(http.ResponseWriter) http.ResponseWriter
		ctx  bool
		want string
	}{
		{name: "carrier", w: func(w http.ResponseWriter) http.ResponseWriter { return &carrier{w, noInstance} },
			want: `{"type":"about:blank","title":"Bad Request","detail":"bad","status":400}` + "\n"},
		{name: "wrapped carrier", w: func(w http.ResponseWriter) http.ResponseWriter { return wrapper{&carrier{w, noInstance}} },
			want: `{"type":"about:blank","title":"Bad Request","detail":"bad","status":400}` + "\n"},
		{name: "carrier without style", w: func(w http.ResponseWriter) http.ResponseWriter { return &carrier{w, nil} },
			want: `{"type":"about:blank","title":"Bad Request","detail":"bad","instance":"/v1/x","status":400}` + "\n"},
		{name: "context first", w: func(w http.ResponseWriter) http.ResponseWriter { return &carrier{w, noInstance} }, ctx: true,
			want: `{"type":"about:blank","title":"Context","detail":"bad","instance":"/v1/x","status":400}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			r := httptest.NewRequest("POST", "/v1/x", nil)
			if tt.ctx {
				r = r.WithContext(WithStyle(r.Context(), titled))
			}
			Write(tt.w(rec), r, nil, Invalidf("bad"))
			if got := rec.Body.String(); got != tt.want {
				t.Fatalf("body\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}
