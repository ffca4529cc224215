package cli

import (
	"encoding"
	"flag"
	"fmt"
	"strconv"
	"time"
)

// The declaring methods shadow flag.FlagSet's so that a Sub set prefixes the
// names and records the env twins; their parse errors say what was expected
// (the flag package's say only "parse error").

// Var declares a flag with a custom value.
func (f *FlagSet) Var(v flag.Value, name, usage string) { f.FlagSet.Var(v, f.declare(name), usage) }

// TextVar declares a flag parsed by p's UnmarshalText.
func (f *FlagSet) TextVar(p encoding.TextUnmarshaler, name string, def encoding.TextMarshaler, usage string) {
	f.FlagSet.TextVar(p, f.declare(name), def, usage)
}

// String declares a string flag.
func (f *FlagSet) String(name, def, usage string) *string {
	return f.FlagSet.String(f.declare(name), def, usage)
}

// StringVar declares a string flag stored in p.
func (f *FlagSet) StringVar(p *string, name, def, usage string) {
	f.FlagSet.StringVar(p, f.declare(name), def, usage)
}

// Int declares an integer flag.
func (f *FlagSet) Int(name string, def int, usage string) *int {
	p := new(int)
	f.IntVar(p, name, def, usage)
	return p
}

// IntVar declares an integer flag stored in p.
func (f *FlagSet) IntVar(p *int, name string, def int, usage string) {
	*p = def
	f.Var(intValue{p}, name, usage)
}

// Int64 declares a 64-bit integer flag.
func (f *FlagSet) Int64(name string, def int64, usage string) *int64 {
	p := new(int64)
	*p = def
	f.Var(int64Value{p}, name, usage)
	return p
}

// Bool declares a boolean flag (-name alone means true).
func (f *FlagSet) Bool(name string, def bool, usage string) *bool {
	p := new(bool)
	*p = def
	f.Var(boolValue{p}, name, usage)
	return p
}

// DurationVar declares a Go duration flag (1m30s) stored in p.
func (f *FlagSet) DurationVar(p *time.Duration, name string, def time.Duration, usage string) {
	*p = def
	f.Var(durationValue{p}, name, usage)
}

// Duration declares a Go duration flag (1m30s).
func (f *FlagSet) Duration(name string, def time.Duration, usage string) *time.Duration {
	p := new(time.Duration)
	f.DurationVar(p, name, def, usage)
	return p
}

type intValue struct{ p *int }

func (v intValue) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.Itoa(*v.p)
}

func (v intValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("want a whole number, such as 32")
	}
	*v.p = n
	return nil
}

type int64Value struct{ p *int64 }

func (v int64Value) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.FormatInt(*v.p, 10)
}

func (v int64Value) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("want a whole number, such as 1048576")
	}
	*v.p = n
	return nil
}

type boolValue struct{ p *bool }

func (v boolValue) IsBoolFlag() bool { return true }

func (v boolValue) String() string {
	if v.p == nil {
		return "false"
	}
	return strconv.FormatBool(*v.p)
}

func (v boolValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true or false (or -flag alone for true)")
	}
	*v.p = b
	return nil
}

type durationValue struct{ p *time.Duration }

func (v durationValue) String() string {
	if v.p == nil {
		return "0s"
	}
	return v.p.String()
}

func (v durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration with a unit, such as 500ms, 30s or 1h")
	}
	*v.p = d
	return nil
}
