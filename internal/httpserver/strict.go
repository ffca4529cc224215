package httpserver

import (
	"bytes"
	"encoding/json"
	"unicode"
	"unicode/utf8"

	"github.com/hmsuite/hms/internal/problem"
)

// CheckJSON refuses what encoding/json lets through silently: bytes that are
// not UTF-8 (it would store them raw in a json.RawMessage, or turn them into
// U+FFFD) and an object key given twice at any depth (it keeps the last, and
// a raw copy keeps both). Keys that differ only in case ({"ID":"a","id":"b"})
// count as the same key: encoding/json matches struct fields
// case-insensitively and silently picks one, and free-form objects stored
// raw (SLS ExtraProperties) are decoded into structs by their readers (HSM)
// later. It does not judge the syntax: the decoder that runs next does. Every JSON request body of the suite passes through it (ReadJSON,
// DecodeJSON).
func CheckJSON(b []byte) error {
	if !utf8.Valid(b) {
		return problem.Invalidf("request body: invalid UTF-8 at byte %d", invalidUTF8At(b))
	}
	var c keyChecker
	return c.check(b)
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// smallObject is how many keys an object may have before its keys go into
// a map: below it a linear scan costs less than hashing.
const smallObject = 16

// frame is one open object or array.
type frame struct {
	object  bool
	wantKey bool
	first   int               // index in keyChecker.keys of this object's first key
	set     map[string]string // folded key -> key as given, once there are more than smallObject
}

// keyChecker walks the structure of a JSON text and finds duplicate keys. Keys
// of small objects are kept as sub-slices of the body, so a typical body costs
// no allocation beyond the stacks.
type keyChecker struct {
	stack []frame
	keys  [][]byte
}

func (c *keyChecker) check(b []byte) error {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{':
			c.stack = append(c.stack, frame{object: true, wantKey: true, first: len(c.keys)})
		case '[':
			c.stack = append(c.stack, frame{first: len(c.keys)})
		case '}', ']':
			if n := len(c.stack); n > 0 {
				c.keys = c.keys[:c.stack[n-1].first]
				c.stack = c.stack[:n-1]
			}
		case ',':
			if n := len(c.stack); n > 0 && c.stack[n-1].object {
				c.stack[n-1].wantKey = true
			}
		case '"':
			end := stringEnd(b, i)
			if n := len(c.stack); n > 0 && c.stack[n-1].wantKey {
				c.stack[n-1].wantKey = false
				if err := c.addKey(&c.stack[n-1], b[i+1:end]); err != nil {
					return err
				}
			}
			i = end
		}
	}
	return nil
}

// stringEnd is the index of the quote closing the string opened at b[i]
// (len(b) when it is not closed).
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(b)
}

func (c *keyChecker) addKey(f *frame, raw []byte) error {
	key := raw
	if bytes.IndexByte(raw, '\\') >= 0 {
		// "\u0041" and "A" are the same key.
		var s string
		if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s) != nil {
			return nil // malformed: the decoder says so
		}
		key = []byte(s)
	}
	if f.set != nil {
		folded := foldKey(key)
		if first, dup := f.set[folded]; dup {
			return duplicateKey(first, key)
		}
		f.set[folded] = string(key)
		return nil
	}
	for _, k := range c.keys[f.first:] {
		if bytes.EqualFold(k, key) {
			return duplicateKey(string(k), key)
		}
	}
	c.keys = append(c.keys, key)
	if len(c.keys)-f.first > smallObject {
		f.set = make(map[string]string, 2*smallObject)
		for _, k := range c.keys[f.first:] {
			f.set[foldKey(k)] = string(k)
		}
		c.keys = c.keys[:f.first]
	}
	return nil
}

// foldKey maps every key bytes.EqualFold (and so encoding/json's field
// matching) takes as equal to one string: each rune becomes the smallest of
// its Unicode simple case folding orbit ("K", "k" and the Kelvin sign are
// all "K").
func foldKey(key []byte) string {
	b := make([]byte, 0, len(key))
	for _, r := range string(key) {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b = utf8.AppendRune(b, least)
	}
	return string(b)
}

func duplicateKey(first string, key []byte) error {
	if first == string(key) {
		return problem.Invalidf("request body: duplicate key %q", key)
	}
	return problem.Invalidf("request body: duplicate key %q (same as %q but for case)", key, first)
}

// DecodeJSON is ReadJSON for a body already read: CheckJSON, then one JSON
// value into v and nothing after it. Errors are ErrInvalid.
func DecodeJSON(b []byte, v any) error {
	if err := CheckJSON(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return DecodeError(err)
	}
	if dec.InputOffset() != int64(len(b)) && len(bytes.TrimLeft(b[dec.InputOffset():], " \t\r\n")) > 0 {
		return problem.Invalidf("request body: unexpected data after the JSON value")
	}
	return nil
}

// CheckText refuses a name or ID that would mislead whoever reads it in a
// log, a terminal or a listing: invalid UTF-8, control characters (NUL, ESC,
// newlines) and the invisible bidirectional controls that reorder what is
// displayed (U+202E and friends). field names the value in the error.
func CheckText(field, s string) error {
	if !utf8.ValidString(s) {
		return problem.Invalidf("%s: invalid UTF-8", field)
	}
	for i, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return problem.Invalidf("%s: %q has the control character %U at byte %d", field, s, r, i)
		}
	}
	return nil
}
