package httpserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/problem"
)

func TestReadJSONStrict(t *testing.T) {
	var wide strings.Builder
	wide.WriteString("{")
	for i := range 40 {
		fmt.Fprintf(&wide, `"k%d":%d,`, i, i)
	}
	wide.WriteString(`"k7":0}`)
	wideCase := strings.Replace(wide.String(), `"k7":0}`, `"K7":0}`, 1)
	tests := []struct {
		name, in, want string
	}{
		{name: "invalid utf-8 in a string", in: "{\"ExtraProperties\":{\"Name\":\"a\xffb\"}}", want: "invalid UTF-8 at byte 29"},
		{name: "invalid utf-8 in a key", in: "{\"\xc3\":1}", want: "invalid UTF-8 at byte 2"},
		{name: "duplicate top-level key", in: `{"NID":5,"NID":6}`, want: `duplicate key "NID"`},
		{name: "duplicate nested key", in: `{"a":[{"x":1},{"b":{"NID":5,"c":[],"NID":6}}]}`, want: `duplicate key "NID"`},
		{name: "duplicate spelled with an escape", in: `{"NID":5,"N\u0049D":6}`, want: `duplicate key "NID"`},
		{name: "duplicate in a wide object", in: wide.String(), want: `duplicate key "k7"`},
		// encoding/json would put one of them in a struct's ID field, silently.
		{name: "duplicate but for case", in: `{"ID":"a","id":"b"}`, want: `duplicate key "id" (same as "ID" but for case)`},
		{name: "duplicate but for case, nested", in: `{"x":{"Role":"a","rOLE":"b"}}`, want: `duplicate key "rOLE"`},
		{name: "duplicate but for case in a wide object", in: wideCase, want: `duplicate key "K7" (same as "k7"`},
		{name: "duplicate through the Kelvin sign", in: `{"k":1,"K":2}`, want: `duplicate key "K"`},
		{name: "duplicate through the long s", in: `{"Status":1,"ſtatus":2}`, want: "duplicate key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := http.NewRequest("POST", "/", strings.NewReader(tt.in))
			var v any
			err := ReadJSON(nil, r, 0, &v)
			if err == nil || !strings.Contains(err.Error(), tt.want) || problem.Status(err) != 400 {
				t.Fatalf("err = %v, want a 400 mentioning %q", err, tt.want)
			}
		})
	}
	for _, ok := range []string{
		`{"a":{"x":1},"b":{"x":2},"c":[{"x":1},{"x":1}]}`, `{"k":"{\"k\":1,\"k\":2}","s":"\"k\""}`,
		`["a","a"]`, `{"é":"ü","e":"u"}`, `{"a":{"A":1},"b":{"a":2}}`, `{"K":1,"\u212b":2}`,
	} {
		r, _ := http.NewRequest("POST", "/", strings.NewReader(ok))
		var v any
		if err := ReadJSON(nil, r, 0, &v); err != nil {
			t.Errorf("ReadJSON(%s) = %v, want it accepted", ok, err)
		}
	}
}

func TestCheckText(t *testing.T) {
	for _, bad := range []string{"ab\x00c", "HMN\u202Eevil", "a\nb", "\x1b[31mred", "x\u2066y", "\xff"} {
		if err := CheckText("field Name", bad); err == nil || problem.Status(err) != 400 {
			t.Errorf("CheckText(%q) = %v, want a 400", bad, err)
		}
	}
	for _, good := range []string{"HMN", "Compute Nodes", "grüppe-1", "日本"} {
		if err := CheckText("field Name", good); err != nil {
			t.Errorf("CheckText(%q) = %v", good, err)
		}
	}
}

// FuzzCheckJSON: CheckJSON never panics, and what it and the decoder accept
// has neither invalid UTF-8 nor a key given twice in one object (case aside).
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":1,"a":2}`, `[{"a":{"b":1,"b":2}}]`, "{\"\xff\":1}", `{"a\"":1,"a\u0022":2}`, `{"ID":1,"id":2}`, `{"k":1,"\u212a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v any
		if DecodeJSON(b, &v) != nil {
			return
		}
		if !json.Valid(b) {
			t.Fatalf("accepted invalid JSON %q", b)
		}
		if hasDuplicate(json.NewDecoder(strings.NewReader(string(b)))) {
			t.Fatalf("accepted a duplicate key in %q", b)
		}
	})
}

// hasDuplicate walks dec token by token (the slow, obviously right way).
func hasDuplicate(dec *json.Decoder) bool {
	type obj struct {
		keys    []string
		wantKey bool
	}
	var stack []*obj
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *obj
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, &obj{wantKey: true})
				continue
			case '[':
				stack = append(stack, nil)
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if top != nil && top.wantKey {
				for _, k := range top.keys {
					if strings.EqualFold(k, v) {
						return true
					}
				}
				top.keys = append(top.keys, v)
				top.wantKey = false
				continue
			}
		}
		if len(stack) > 0 && stack[len(stack)-1] != nil {
			stack[len(stack)-1].wantKey = true
		}
	}
}
