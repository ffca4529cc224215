package heartbeat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unsafe"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
)

// beat is a validated heartbeat: the normalised xname and the node's time stamp.
// name may point into the request body; the tracker copies it when it keeps it.
type beat struct {
	name string
	sent int64 // unix nanoseconds
}

// rawBeat holds the fields of one heartbeat object as the fast scanner found them.
type rawBeat struct {
	component, status, timestamp []byte
	hasComponent, hasStatus      bool
	hasTimestamp                 bool
}

// wireBeat is the encoding/json form, used when the fast scanner declines a body;
// it also produces the error messages for malformed JSON. NID and Hostname are
// not used, but must be JSON strings (or null), as the shipped hbtd decodes
// them into strings and refuses a number.
type wireBeat struct {
	Component *string `json:"Component"`
	Hostname  *string `json:"Hostname"`
	NID       *string `json:"NID"`
	Status    *string `json:"Status"`
	TimeStamp *string `json:"TimeStamp"`
}

// decodeBeat parses one heartbeat object. pathName, when not empty, is the xname
// of POST /heartbeat/{xname} and replaces Component.
func decodeBeat(body []byte, pathName string) (beat, error) {
	var rb rawBeat
	if end, ok := scanObject(body, skipSpace(body, 0), &rb); ok && skipSpace(body, end) == len(body) {
		return rb.validate("", pathName)
	}
	var wb wireBeat
	if err := httpserver.DecodeJSON(body, &wb); err != nil {
		return beat{}, err
	}
	rb = wb.raw()
	return rb.validate("", pathName)
}

// decodeBatch parses a JSON array of heartbeat objects into dst, all or nothing.
func decodeBatch(body []byte, dst []beat) ([]beat, error) {
	dst = dst[:0]
	if out, ok, err := scanBatch(body, dst); ok {
		return out, err
	}
	var wbs []wireBeat
	if err := httpserver.DecodeJSON(body, &wbs); err != nil {
		return dst, err
	}
	for i := range wbs {
		rb := wbs[i].raw()
		b, err := rb.validate(fmt.Sprintf("[%d].", i), "")
		if err != nil {
			return dst[:0], err
		}
		dst = append(dst, b)
	}
	return dst, nil
}

// scanBatch is the fast path of decodeBatch. ok is false when the body needs the
// general decoder.
func scanBatch(body []byte, dst []beat) (out []beat, ok bool, err error) {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '[' {
		return dst, false, nil
	}
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == ']' {
		return dst, skipSpace(body, i+1) == len(body), nil
	}
	for n := 0; ; n++ {
		var rb rawBeat
		end, ok := scanObject(body, i, &rb)
		if !ok {
			return dst, false, nil
		}
		b, err := rb.validate("", "")
		if err != nil {
			_, err = rb.validate(fmt.Sprintf("[%d].", n), "") // name the index only on the error path
			return dst[:0], true, err
		}
		dst = append(dst, b)
		i = skipSpace(body, end)
		if i >= len(body) {
			return dst, false, nil
		}
		switch body[i] {
		case ',':
			i = skipSpace(body, i+1)
		case ']':
			return dst, skipSpace(body, i+1) == len(body), nil
		default:
			return dst, false, nil
		}
	}
}

func (w *wireBeat) raw() rawBeat {
	var rb rawBeat
	if w.Component != nil {
		rb.component, rb.hasComponent = []byte(*w.Component), true
	}
	if w.Status != nil {
		rb.status, rb.hasStatus = []byte(*w.Status), true
	}
	if w.TimeStamp != nil {
		rb.timestamp, rb.hasTimestamp = []byte(*w.TimeStamp), true
	}
	return rb
}

// validate checks the required fields. prefix goes before field names in errors.
func (rb *rawBeat) validate(prefix, pathName string) (beat, error) {
	name := pathName
	if name == "" {
		if !rb.hasComponent || len(rb.component) == 0 {
			return beat{}, problem.Invalidf("field %sComponent: required", prefix)
		}
		name = view(rb.component)
		if !xname.Valid(name) {
			return beat{}, problem.Invalidf("field %sComponent: %q is not a valid xname", prefix, name)
		}
		name = normalized(name)
	}
	if !rb.hasStatus || len(rb.status) == 0 {
		return beat{}, problem.Invalidf("field %sStatus: required", prefix)
	}
	if !rb.hasTimestamp || len(rb.timestamp) == 0 {
		return beat{}, problem.Invalidf("field %sTimeStamp: required", prefix)
	}
	ts, err := parseTimeStamp(view(rb.timestamp))
	if err != nil {
		return beat{}, problem.Invalidf("field %sTimeStamp: %v", prefix, err)
	}
	return beat{name: name, sent: ts.UnixNano()}, nil
}

// normalized returns the canonical spelling of a valid xname without allocating
// when it already is canonical, which is what nodes send.
func normalized(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c == ' ' || c == '\t' ||
			c == '0' && i+1 < len(s) && isDigit(s[i+1]) && (i == 0 || !isDigit(s[i-1])) {
			return xname.Normalize(s)
		}
	}
	return s
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// view is a string that shares b's bytes. The tracker clones names it keeps, so
// views never outlive the request body they point into.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// scanObject reads a flat JSON object starting at b[i] whose values are scalars,
// recording the heartbeat fields (keys matched case-insensitively). It returns
// the index after the object. ok is false for anything it does not handle
// (escapes, nesting, non-string heartbeat fields, a key given twice, more
// than maxFastKeys keys, bad syntax); the caller then uses the strict decoder,
// which also produces the error.
func scanObject(b []byte, i int, rb *rawBeat) (end int, ok bool) {
	if i >= len(b) || b[i] != '{' {
		return 0, false
	}
	var keys [maxFastKeys][]byte
	nkeys := 0
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		key, next, ok := scanString(b, i)
		if !ok || nkeys == maxFastKeys {
			return 0, false
		}
		for _, k := range keys[:nkeys] {
			// Keys differing only in case repeat a field too (fieldOf folds
			// case, as encoding/json does): the slow path refuses them,
			// instead of the last one silently winning here.
			if bytes.EqualFold(k, key) {
				return 0, false
			}
		}
		keys[nkeys] = key
		nkeys++
		i = skipSpace(b, next)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		i = skipSpace(b, i+1)
		if i >= len(b) {
			return 0, false
		}
		field := fieldOf(key)
		if b[i] == '"' {
			val, next, ok := scanString(b, i)
			if !ok {
				return 0, false
			}
			rb.set(field, val)
			i = next
		} else {
			if field != fieldOther && !isNull(b, i) {
				return 0, false
			}
			if i, ok = scanScalar(b, i); !ok {
				return 0, false
			}
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// maxFastKeys is the most keys the fast path checks for duplicates; a
// heartbeat has five.
const maxFastKeys = 8

func isNull(b []byte, i int) bool { return len(b)-i >= 4 && string(b[i:i+4]) == "null" }

type field uint8

const (
	fieldOther field = iota
	fieldComponent
	fieldHostname
	fieldNID
	fieldStatus
	fieldTimeStamp
)

func fieldOf(key []byte) field {
	switch {
	case bytes.EqualFold(key, []byte("Component")):
		return fieldComponent
	case bytes.EqualFold(key, []byte("Status")):
		return fieldStatus
	case bytes.EqualFold(key, []byte("TimeStamp")):
		return fieldTimeStamp
	case bytes.EqualFold(key, []byte("Hostname")):
		return fieldHostname
	case bytes.EqualFold(key, []byte("NID")):
		return fieldNID
	}
	return fieldOther
}

func (rb *rawBeat) set(f field, v []byte) {
	switch f {
	case fieldComponent:
		rb.component, rb.hasComponent = v, true
	case fieldStatus:
		rb.status, rb.hasStatus = v, true
	case fieldTimeStamp:
		rb.timestamp, rb.hasTimestamp = v, true
	}
}

// scanString reads a JSON string without escapes starting at b[i] and returns
// its contents (no quotes) and the index after the closing quote.
func scanString(b []byte, i int) (s []byte, next int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	j := bytes.IndexByte(b[i+1:], '"')
	if j < 0 {
		return nil, 0, false
	}
	s = b[i+1 : i+1+j]
	for _, c := range s {
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return nil, 0, false // escapes, control bytes, non-ASCII: let encoding/json judge
		}
	}
	return s, i + 2 + j, true
}

// scanScalar skips a JSON number, true, false or null (loosely: the general
// decoder checks the document when in doubt) and returns the index after it.
func scanScalar(b []byte, i int) (int, bool) {
	for _, lit := range []string{"true", "false", "null"} {
		if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
			return i + len(lit), true
		}
	}
	j := i
	for j < len(b) && (isDigit(b[j]) || b[j] == '-' || b[j] == '+' || b[j] == '.' || b[j] == 'e' || b[j] == 'E') {
		j++
	}
	if j == i {
		return 0, false
	}
	if !json.Valid(b[i:j]) {
		return 0, false
	}
	return j, true
}

// parseTimeStamp reads an ISO 8601 time stamp: RFC 3339, a space instead of T,
// no colon in the offset, an hour-only offset, or no zone (UTC). It also takes
// the spec's example, an hour offset followed by a stray Z ("-5Z").
func parseTimeStamp(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if len(s) > 20 && strings.HasSuffix(s, "Z") {
		if k := strings.LastIndexAny(s[19:], "+-"); k >= 0 {
			off := s[19+k+1 : len(s)-1]
			if len(off) == 1 {
				off = "0" + off
			}
			s = s[:19+k+1] + off
		}
	}
	// ISO 8601 spellings accepted besides RFC 3339.
	layouts := [...]string{
		"2006-01-02T15:04:05.999999999Z0700",
		"2006-01-02T15:04:05.999999999Z07",
		"2006-01-02T15:04:05.999999999",
		"2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999Z0700",
		"2006-01-02 15:04:05.999999999",
	}
	for _, l := range layouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO 8601 time stamp", s)
}
