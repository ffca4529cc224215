// Package xname parses and classifies HMS component names ("xnames"), such
// as x3000c0s7b0n1 for node 1 behind BMC 0 in slot 7 of chassis 0 of cabinet
// 3000.
//
// The grammar is the one of hms-xname's xnametypes package: every component
// type has a parent type, a letter and a number range, and an xname is its
// parent's xname followed by its own letter and number. Cabinets (xN) and
// CDUs (dN) are children of the system, s0. A few names stand outside the
// tree: SMS boxes (smsN), partitions (pN, pN.M) and all, all_comp, all_svc.
//
// Parsing is case-insensitive and ignores leading zeros and surrounding white
// space; an Xname always carries the normalised spelling (x0003000C0 becomes
// x3000c0). Number ranges are checked on the normalised numbers. Unlike HMS,
// which tries one regular expression per type, Parse reads the name once,
// segment by segment, and does not allocate when its input is already
// normalised.
package xname

import (
	"errors"
	"strings"
)

// ErrInvalid is wrapped by every error that Parse returns, so callers can
// classify them with errors.Is.
var ErrInvalid = errors.New("invalid xname")

// Xname is a parsed, normalised xname. The zero value is not a valid xname:
// its Type is TypeInvalid and its String is "". Xnames are comparable, and
// two Xnames are equal when their normalised strings are.
type Xname struct {
	s    string
	k    kind
	n    uint8
	nums [maxDepth]int32
}

// Parse parses s as an xname. It trims white space, lower-cases ASCII
// letters and strips leading zeros from every number, then checks the
// result against the grammar. Errors wrap ErrInvalid and name the input,
// as in `xname "x1c9": chassis number 9 out of range 0-7`.
func Parse(s string) (Xname, error) {
	t := strings.TrimSpace(s)
	x, dirty, f := scan(t)
	if f.code != failNone {
		return Xname{}, newError(s, f)
	}
	x.s = t
	if dirty {
		x.s = normalize(t)
	}
	return x, nil
}

// MustParse is like Parse but panics if s is not a valid xname. It is meant
// for constants in tests and examples.
func MustParse(s string) Xname {
	x, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return x
}

// Valid reports whether s is a valid xname, in any case and with any
// leading zeros. It does not allocate.
func Valid(s string) bool {
	_, _, f := scan(strings.TrimSpace(s))
	return f.code == failNone
}

// TypeOf returns the type of xname s, or TypeInvalid if s is not valid. It
// does not allocate.
func TypeOf(s string) Type {
	x, _, f := scan(strings.TrimSpace(s))
	if f.code != failNone {
		return TypeInvalid
	}
	return x.Type()
}

// IsNode reports whether s is the xname of a Node.
func IsNode(s string) bool { return TypeOf(s) == Node }

// Parent returns the normalised xname of the parent of xname s: "s0" for a
// Cabinet or CDU, "" for s0, SMS boxes, partitions, the "all" names and
// strings that are not valid xnames.
func Parent(s string) string {
	x, err := Parse(s)
	if err != nil {
		return ""
	}
	p, _ := x.Parent()
	return p.s
}

// Normalize trims white space from s, lower-cases its ASCII letters and
// strips leading zeros from every run of digits, as HMS's
// NormalizeHMSCompID does. It does not check that s is a valid xname. Bytes
// other than ASCII letters and digits are kept as they are.
func Normalize(s string) string { return normalize(strings.TrimSpace(s)) }

// normalize is Normalize for a string that is already trimmed. It returns s
// itself when s is already normalised.
func normalize(s string) string {
	var b strings.Builder // written only once s turns out to need changes
	changed := false
	lead := true // at a digit that may be a leading zero
	for i := 0; i < len(s); i++ {
		c := s[i]
		drop := false
		if isDigit(c) {
			drop = lead && c == '0' && i+1 < len(s) && isDigit(s[i+1])
			lead = drop
		} else {
			lead = true
			c = lower(c)
		}
		if !changed && (drop || c != s[i]) {
			changed = true
			b.Grow(len(s))
			b.WriteString(s[:i])
		}
		if changed && !drop {
			b.WriteByte(c)
		}
	}
	if !changed {
		return s
	}
	return b.String()
}

// String returns the normalised xname, or "" for the zero Xname.
func (x Xname) String() string { return x.s }

// Type returns the type of x; TypeInvalid for the zero Xname.
func (x Xname) Type() Type { return grammar[x.k].typ }

// IsZero reports whether x is the zero Xname.
func (x Xname) IsZero() bool { return x.k == kInvalid }

// Numbers returns the numbers in x, from the top of the tree down: [3000 0 7
// 0 1] for x3000c0s7b0n1, [0] for s0, [1 2] for p1.2, none for the "all"
// names. The caller owns the returned slice.
func (x Xname) Numbers() []int {
	ns := make([]int, x.n)
	for i := range ns {
		ns[i] = int(x.nums[i])
	}
	return ns
}

// Parent returns the parent of x, whose type is x.Type().Parent(): s0 for a
// Cabinet or CDU. It returns false for types without a parent. It does not
// allocate.
func (x Xname) Parent() (Xname, bool) {
	switch p := grammar[x.k].parent; p {
	case kInvalid:
		return Xname{}, false
	case kSystem:
		return Xname{s: "s0", k: kSystem, n: 1}, true
	default:
		// Below the system every segment is one letter and a number, so the
		// parent's xname is x's without its last segment.
		i := len(x.s)
		for i > 0 && isDigit(x.s[i-1]) {
			i--
		}
		x.s, x.k = x.s[:i-1], p
		x.n--
		x.nums[x.n] = 0
		return x, true
	}
}

// MarshalText returns the normalised xname, so an Xname encodes as a JSON
// string.
func (x Xname) MarshalText() ([]byte, error) { return []byte(x.s), nil }

// UnmarshalText parses text with Parse.
func (x *Xname) UnmarshalText(text []byte) error {
	p, err := Parse(string(text))
	if err != nil {
		return err
	}
	*x = p
	return nil
}
