package ipxe

import (
	"net/http"
	"strings"
	"testing"
)

// TestStrictBodies: a body encoding/json would read one way and a later
// reader another (a key given twice, also in another case; bytes after the
// value; invalid UTF-8) is refused on every BSS route that takes one, with
// hms-bss's detail shape, and changes nothing.
func TestStrictBodies(t *testing.T) {
	h := cloudInitSetup(t)
	const bp = "/boot/v1/bootparameters"
	tests := []struct {
		name, method, path, body string
		status                   int
		want                     string // the detail ("" for scn's empty 400)
	}{
		{name: "post duplicate key", method: "POST", path: bp, body: `{"hosts":["x1c0s0b0n0"],"kernel":"a","kernel":"b"}`, status: 400,
			want: `"detail":"Bad Request: request body: duplicate key \"kernel\""`},
		{name: "put duplicate but for case", method: "PUT", path: bp, body: `{"hosts":["x3000c0s1b0n0"],"Hosts":["Default"],"kernel":"http://evil"}`, status: 400,
			want: `"detail":"Bad Request: request body: duplicate key \"Hosts\" (same as \"hosts\" but for case)"`},
		{name: "patch nested duplicate", method: "PATCH", path: bp, body: `{"hosts":["Global"],"cloud-init":{"meta-data":{"foo":1,"foo":2}}}`, status: 400,
			want: `"detail":"Bad Request: request body: duplicate key \"foo\""`},
		{name: "delete trailing data", method: "DELETE", path: bp, body: `{"hosts":["x3000c0s1b0n0"]} {"hosts":["Default"]}`, status: 400,
			want: `"detail":"Bad Request: invalid character '{' after top-level value"`},
		{name: "put trailing garbage", method: "PUT", path: bp, body: `{"hosts":["x3000c0s1b0n0"],"kernel":"http://k2"}x`, status: 400,
			want: `"detail":"Bad Request: invalid character 'x' after top-level value"`},
		{name: "post invalid utf-8", method: "POST", path: bp, body: "{\"hosts\":[\"x1c0s0b0n0\"],\"params\":\"a\xff\"}", status: 400,
			want: `"detail":"Bad Request: request body: invalid UTF-8 at byte 35"`},
		{name: "get body duplicate", method: "GET", path: bp, body: `{"kernel":"a","kernel":"http://k"}`, status: 400,
			want: `"detail":"Failed to interpret request body '{\"kernel\":\"a\",\"kernel\":\"http://k\"}': request body: duplicate key \"kernel\""`},
		{name: "phone-home duplicate", method: "POST", path: "/phone-home", body: `{"hostname":"a","hostname":"b"}`, status: 400,
			want: `"detail":"Bad Request"`},
		{name: "phone-home trailing", method: "POST", path: "/phone-home", body: `{"hostname":"a"}]`, status: 400,
			want: `"detail":"Bad Request"`},
		{name: "scn duplicate", method: "POST", path: "/boot/v1/scn", body: `{"Components":["x3000c0s1b0n0"],"State":"Ready","State":"Off"}`, status: 400},
	}
	_, before := h.mustDo(t, http.MethodGet, bp, "", http.StatusOK)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := h.do(t, tt.method, tt.path, tt.body)
			if status != tt.status || !strings.Contains(body, tt.want) || (tt.want == "" && body != "") {
				t.Fatalf("%d %s\nwant %d %s", status, body, tt.status, tt.want)
			}
			if _, after := h.mustDo(t, http.MethodGet, bp, "", http.StatusOK); after != before {
				t.Errorf("a refused request changed the store:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
	// Unknown fields are still ignored, as by hms-bss and every other daemon.
	h.mustDo(t, http.MethodPatch, bp, `{"hosts":["x3000c0s1b0n0"],"params":"p=1","comment":"x"}`, http.StatusOK)
}

// TestBodyTooLarge: a body over the limit is a 413 problem, not hms-bss's
// "Bad Request: http: request body too large".
func TestBodyTooLarge(t *testing.T) {
	h := newHarness(t)
	big := `{"params":"` + strings.Repeat("a", 9<<20) + `"}`
	status, _, body := h.do(t, http.MethodPost, "/boot/v1/bootparameters", big)
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "over 8388608 bytes") {
		t.Fatalf("%d %.200s, want a 413 naming the limit", status, body)
	}
}
