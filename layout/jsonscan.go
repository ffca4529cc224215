package layout

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// This file walks JSON that encoding/json has already checked (json.Valid or a
// successful decode), without building maps or copying values. Loading a
// 357,000-object dump through map[string]json.RawMessage allocated millions of
// small objects and spent most of its time in the garbage collector; walking
// the bytes in place does not. Every function here assumes valid input.

// skipSpace returns the index of the first non-space byte of b at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the index just past the JSON value starting at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	default: // number, true, false, null
		for i < len(b) && !isDelim(b[i]) {
			i++
		}
		return i
	}
}

func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// stringEnd returns the index just past the string starting at the quote b[i].
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// eachMember calls fn with the raw key (quotes included) and raw value of every
// member of the object obj, in order, stopping at the first error.
func eachMember(obj []byte, fn func(key, val []byte) error) error {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	for i = skipSpace(obj, i+1); i < len(obj) && obj[i] == '"'; {
		ke := stringEnd(obj, i)
		key := obj[i:ke]
		vs := skipSpace(obj, skipSpace(obj, ke)+1) // past the colon
		ve := valueEnd(obj, vs)
		if err := fn(key, obj[vs:ve]); err != nil {
			return err
		}
		i = skipSpace(obj, ve)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return nil
}

// eachElement calls fn with every raw element of the array arr.
func eachElement(arr []byte, fn func(elem []byte) error) error {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return nil
	}
	for i = skipSpace(arr, i+1); i < len(arr) && arr[i] != ']'; {
		e := valueEnd(arr, i)
		if err := fn(arr[i:e]); err != nil {
			return err
		}
		i = skipSpace(arr, e)
		if i < len(arr) && arr[i] == ',' {
			i = skipSpace(arr, i+1)
		}
	}
	return nil
}

// unquote returns the contents of the raw JSON string s.
func unquote(s []byte) string {
	if len(s) >= 2 && bytes.IndexByte(s, '\\') < 0 {
		return string(s[1 : len(s)-1])
	}
	var out string
	_ = json.Unmarshal(s, &out)
	return out
}

// isUint reports whether the raw JSON number s is a non-negative integer that
// fits in an int64.
func isUint(s []byte) bool {
	if len(s) == 0 || s[0] == '-' {
		return false
	}
	_, err := strconv.ParseInt(string(s), 10, 64)
	return err == nil
}

// hasSpace reports whether the valid JSON b has white space outside strings,
// that is, whether compacting it would change it.
func hasSpace(b []byte) bool {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = stringEnd(b, i) - 1
		case ' ', '\t', '\n', '\r':
			return true
		}
	}
	return false
}
