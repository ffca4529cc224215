package fleetproc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Spec is what the environment variable of a child says it serves:
// "<first>,<count>", then the comma-separated fields its own test adds
// (a latency, the URLs its nodes call, ...). A field must not hold a comma.
type Spec struct {
	// First and Count are Config's: the child serves count BMCs from the
	// first'th xname on.
	First, Count int
	// Args are the fields after count, in order.
	Args []string
}

// String is s as the child's environment variable holds it.
func (s Spec) String() string {
	return strings.Join(append([]string{strconv.Itoa(s.First), strconv.Itoa(s.Count)}, s.Args...), ",")
}

// ParseSpec reads a Spec with exactly args fields after count.
func ParseSpec(v string, args int) (Spec, error) {
	p := strings.Split(v, ",")
	if len(p) != 2+args {
		return Spec{}, fmt.Errorf("fleet spec %q: want <first>,<count> and %d more fields", v, args)
	}
	first, err1 := strconv.Atoi(p[0])
	count, err2 := strconv.Atoi(p[1])
	if err1 != nil || err2 != nil || first < 0 || count < 0 {
		return Spec{}, fmt.Errorf("fleet spec %q: first and count are not whole numbers", v)
	}
	return Spec{First: first, Count: count, Args: p[2:]}, nil
}

// Child reads the Spec (with args fields after count) in the environment
// variable name, in the child's test: it skips the test when name is
// unset (the test runs in the parent's process, or in go test ./...,
// where it is no test) and fails it when the value does not parse.
func Child(t testing.TB, name string, args int) Spec {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Skip("child process of a benchmark (fleetproc.Start sets " + name + ")")
	}
	s, err := ParseSpec(v, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}
