package xname

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxDepth is the most numbers an xname has (Drive: x c s b n g k).
const maxDepth = 7

// failure describes why scan rejected its input. It is a plain value so that
// Valid and TypeOf can reject input without allocating; Parse turns it into
// an error.
type failure struct {
	code   failCode
	k      kind   // the type whose number is bad, or the parent of a bad letter
	c      rune   // the offending letter or character
	digits string // the offending number, normalised
}

type failCode uint8

const (
	failNone    failCode = iota
	failEmpty            // nothing but white space
	failSyntax           // does not start like any xname
	failChar             // a character that is not a letter or digit
	failMissing          // a letter with no number after it
	failRange            // a number outside its type's range
	failChild            // a letter that cannot follow the type before it
)

// message returns the part of the error text that follows the input.
func (f failure) message() string {
	n := &grammar[f.k]
	switch f.code {
	case failEmpty:
		return "empty"
	case failChar:
		return fmt.Sprintf("unexpected character %q", string(f.c))
	case failMissing:
		return "missing " + n.noun + " number"
	case failRange:
		switch {
		case n.min == n.max:
			return fmt.Sprintf("%s number %s must be %d", n.noun, f.digits, n.min)
		case n.max < maxNum:
			return fmt.Sprintf("%s number %s out of range %d-%d", n.noun, f.digits, n.min, n.max)
		case f.digits == "0": // the only number below a min of 1
			return fmt.Sprintf("%s number %s must be at least %d", n.noun, f.digits, n.min)
		}
		return fmt.Sprintf("%s number %s is too large", n.noun, f.digits)
	case failChild:
		return fmt.Sprintf("unexpected %q after %s", string(f.c), n.typ)
	}
	return "not a valid xname"
}

// parseError is the error Parse returns. It unwraps to ErrInvalid.
type parseError struct {
	input string
	msg   string
}

func (e *parseError) Error() string { return fmt.Sprintf("xname %q: %s", e.input, e.msg) }

func (e *parseError) Unwrap() error { return ErrInvalid }

// newError builds the error for input s, shortening s so that a hostile
// multi-megabyte "xname" does not end up whole in a log line.
func newError(s string, f failure) error {
	const maxShown = 64
	if len(s) > maxShown {
		s = strings.ToValidUTF8(s[:maxShown], "") + "..."
	}
	return &parseError{input: s, msg: f.message()}
}

// scanner reads an xname one segment (letter + number) at a time, folding
// case and skipping leading zeros as it goes, so that it never needs the
// normalised string.
type scanner struct {
	s     string
	i     int
	dirty bool // the input differs from its normalised form
}

func (sc *scanner) done() bool { return sc.i == len(sc.s) }

// letter consumes one ASCII letter and returns it lower-cased. Otherwise it
// consumes nothing and returns 0.
func (sc *scanner) letter() byte {
	if sc.done() {
		return 0
	}
	c := sc.s[sc.i]
	if 'A' <= c && c <= 'Z' {
		sc.dirty = true
		c += 'a' - 'A'
	}
	if c < 'a' || c > 'z' {
		return 0
	}
	sc.i++
	return c
}

// number consumes a run of digits and checks it against k's range.
func (sc *scanner) number(k kind) (int32, failure) {
	start := sc.i
	for sc.i+1 < len(sc.s) && sc.s[sc.i] == '0' && isDigit(sc.s[sc.i+1]) {
		sc.i++
	}
	if sc.i > start {
		sc.dirty = true
	}
	start = sc.i
	var v int64
	for sc.i < len(sc.s) && isDigit(sc.s[sc.i]) {
		if sc.i-start < 11 { // 11 digits exceed every max without overflowing v
			v = v*10 + int64(sc.s[sc.i]-'0')
		}
		sc.i++
	}
	if sc.i == start {
		return 0, failure{code: failMissing, k: k}
	}
	if n := &grammar[k]; v < int64(n.min) || v > int64(n.max) {
		return 0, failure{code: failRange, k: k, digits: sc.s[start:sc.i]}
	}
	return int32(v), failure{}
}

// bad describes the character at the scanner's position, which is not one
// that may follow an xname of type k.
func (sc *scanner) bad(k kind) failure {
	r, _ := utf8.DecodeRuneInString(sc.s[sc.i:])
	c := lower(sc.s[sc.i])
	if 'a' <= c && c <= 'z' {
		return failure{code: failChild, k: k, c: rune(c)}
	}
	return failure{code: failChar, c: r}
}

// scan parses s, which must already be trimmed. It reports whether s differs
// from its normalised form; the returned Xname has no string yet.
func scan(s string) (Xname, bool, failure) {
	var x Xname
	if s == "" {
		return x, false, failure{code: failEmpty}
	}
	switch {
	case equalFold(s, "all"):
		x.k = kAll
	case equalFold(s, "all_comp"):
		x.k = kAllComp
	case equalFold(s, "all_svc"):
		x.k = kAllSvc
	}
	if x.k != kInvalid {
		return x, hasUpper(s), failure{}
	}
	sc := scanner{s: s}
	var f failure
	switch sc.letter() {
	case 'x', 'd':
		sc.i--
		f = sc.tree(&x)
	case 's':
		f = sc.system(&x)
	case 'p':
		f = sc.partition(&x)
	default:
		f = failure{code: failSyntax}
	}
	return x, sc.dirty, f
}

// tree parses an xname below System: a sequence of letter + number segments
// that walks down the grammar.
func (sc *scanner) tree(x *Xname) failure {
	cur := kSystem
	for {
		c := sc.letter()
		if c == 0 {
			return sc.bad(cur)
		}
		k := child(cur, c)
		if k == kInvalid {
			return failure{code: failChild, k: cur, c: rune(c)}
		}
		v, f := sc.number(k)
		if f.code != failNone {
			return f
		}
		x.nums[x.n] = v // the grammar is maxDepth deep, so x.n stays in range
		x.n++
		cur = k
		if sc.done() {
			x.k = cur
			return failure{}
		}
	}
}

// system parses "s0" or "smsN"; the "s" has been read.
func (sc *scanner) system(x *Xname) failure {
	k := kSystem
	if !sc.done() && !isDigit(sc.s[sc.i]) {
		if sc.letter() != 'm' || sc.letter() != 's' {
			return failure{code: failSyntax}
		}
		k = kSMSBox
	}
	return sc.single(x, k)
}

// single parses the number of a one-segment xname of type k and requires
// the input to end after it.
func (sc *scanner) single(x *Xname, k kind) failure {
	v, f := sc.number(k)
	if f.code != failNone {
		return f
	}
	if !sc.done() {
		return sc.bad(k)
	}
	x.k, x.nums[0], x.n = k, v, 1
	return failure{}
}

// partition parses "pN" or "pN.M"; the "p" has been read.
func (sc *scanner) partition(x *Xname) failure {
	v, f := sc.number(kPartition)
	if f.code != failNone {
		return f
	}
	x.nums[0], x.n = v, 1
	if !sc.done() && sc.s[sc.i] == '.' {
		sc.i++
		if v, f = sc.number(kPartition); f.code != failNone {
			return f
		}
		x.nums[1], x.n = v, 2
	}
	if !sc.done() {
		return sc.bad(kPartition)
	}
	x.k = kPartition
	return failure{}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}
