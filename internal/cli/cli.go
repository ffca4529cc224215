// Package cli is the command-line surface shared by every binary of the suite:
// flags with an environment twin each (HMS_<BINARY>_<FLAG>, dashes as
// underscores), values validated when parsed so a bad one stops the program before
// any port is bound, -version, a warning for HMS_* variables no flag reads, the
// logger, and the signal handling around a run function.
//
// A daemon's flags are declared once, on a *FlagSet, by its domain package
// (layout.RegisterFlags, statemgr.RegisterFlags, ...). The daemon's own binary
// passes its FlagSet; `hms up` passes f.Sub("hsm"), on which every flag gets the
// prefix "hsm-" while its env twin stays the daemon's own (HMS_HSM_*).
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/hmsuite/hms/internal/version"
)

// FlagSet is a flag.FlagSet whose flags also read HMS_<BINARY>_<FLAG> from the
// environment; a flag given on the command line wins over its env twin. Flags
// are declared through FlagSet's own methods (String, Int, Var, ...), which
// apply the prefix of a Sub set.
type FlagSet struct {
	*flag.FlagSet
	// Program is the command shown by -help and -version; it defaults to the
	// binary name (a subcommand sets "hms up" while its env twins stay HMS_UP_*).
	Program string
	// Stderr receives the warnings about HMS_* variables no flag reads
	// (default os.Stderr).
	Stderr io.Writer
	// Environ lists the environment searched for those variables (default
	// os.Environ); only variables getenv also sees are reported.
	Environ func() []string
	// Operands, when set, names the arguments a command takes after its
	// flags (e.g. "XNAME..."); they are then allowed and shown by -help.
	// Otherwise any argument is an error.
	Operands string

	binary string // env scope of the flags declared through this set
	prefix string // prepended to the names of the flags declared through it
	*shared
}

// shared is what a FlagSet and its Sub sets have in common.
type shared struct {
	getenv  func(string) string
	out     io.Writer
	env     map[string]string // flag name -> env twin
	set     map[string]bool   // flags set by env twin or command line
	scopes  []string          // binaries whose HMS_<BINARY>_ variables belong to this set
	version *bool
}

// NewFlagSet returns a FlagSet for binary; getenv is usually os.Getenv, and out
// receives -help and -version output.
func NewFlagSet(binary string, getenv func(string) string, out io.Writer) *FlagSet {
	fs := flag.NewFlagSet(binary, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// The flag package calls Usage on every parse error; the usage text is
	// printed only for -help (in Parse), so a bad value stays a one-line error.
	fs.Usage = func() {}
	sh := &shared{getenv: getenv, out: out, env: map[string]string{}, set: map[string]bool{},
		scopes: []string{binary}}
	sh.version = fs.Bool("version", false, "print the version and exit")
	return &FlagSet{FlagSet: fs, Program: binary, binary: binary, shared: sh}
}

// Sub returns a view of f on which the flags of another binary are declared:
// flag "errtime" declared through f.Sub("hbtd") is -hbtd-errtime here, with the
// env twin HMS_HBTD_ERRTIME of hbtd's own -errtime.
func (f *FlagSet) Sub(binary string) *FlagSet {
	f.scopes = append(f.scopes, binary)
	return &FlagSet{FlagSet: f.FlagSet, Program: f.Program, binary: binary, prefix: f.prefix + binary + "-", shared: f.shared}
}

// Name is the full name of the flag declared as name through f ("hsm-listen"
// for "listen" on f.Sub("hsm")).
func (f *FlagSet) Name(name string) string { return f.prefix + name }

// declare records the env twin of a flag declared through f and returns its
// full name.
func (f *FlagSet) declare(name string) string {
	full := f.prefix + name
	f.env[full] = "HMS_" + envPart(f.binary) + "_" + envPart(name)
	return full
}

// EnvName is the environment twin of the named flag (its full name), e.g.
// HMS_HBTD_HSM_URL.
func (f *FlagSet) EnvName(flagName string) string {
	if e, ok := f.env[flagName]; ok {
		return e
	}
	return "HMS_" + envPart(f.binary) + "_" + envPart(flagName)
}

// Stdout is where -help and -version write (NewFlagSet's out); other
// "print and exit" flags (-help-auth) write there too.
func (f *FlagSet) Stdout() io.Writer { return f.out }

// IsSet reports whether the flag declared as name through f was given on the
// command line or by its env twin.
func (f *FlagSet) IsSet(name string) bool { return f.set[f.prefix+name] }

func envPart(s string) string {
	return strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(s))
}

// ErrHelp is returned by Parse when -h, --help or -version was asked for; the
// text has been written and the program should exit 0.
var ErrHelp = flag.ErrHelp

// Parse applies environment twins first and then args. Errors are one line.
func (f *FlagSet) Parse(args []string) error {
	var errs []error
	f.VisitAll(func(fl *flag.Flag) {
		if fl.Name == "version" {
			return // HMS_X_VERSION=1 in a unit's environment must not stop the daemon
		}
		name := f.EnvName(fl.Name)
		v := f.getenv(name)
		if v == "" {
			return
		}
		if err := fl.Value.Set(v); err != nil {
			errs = append(errs, fmt.Errorf("invalid value %q for %s: %v", v, name, err))
		}
		f.set[fl.Name] = true
	})
	if len(errs) > 0 {
		return errs[0]
	}
	if err := f.FlagSet.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			f.usage()
			return ErrHelp
		}
		return err
	}
	f.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if *f.version {
		fmt.Fprintf(f.out, "%s %s\n", f.Program, version.String())
		return ErrHelp
	}
	if f.NArg() > 0 && f.Operands == "" {
		return fmt.Errorf("unexpected argument %q (flags only; see -help)", f.Arg(0))
	}
	f.warnUnknownEnv()
	return nil
}

// usage lists every flag with its env twin and default, sorted by name.
func (f *FlagSet) usage() {
	operands := ""
	if f.Operands != "" {
		operands = " " + f.Operands
	}
	fmt.Fprintf(f.out, "Usage: %s [flags]%s\n\nEvery flag can also be set from the environment variable shown; a flag on the\ncommand line wins.\n\nFlags:\n", f.Program, operands)
	var fls []*flag.Flag
	f.VisitAll(func(fl *flag.Flag) { fls = append(fls, fl) })
	sort.Slice(fls, func(i, j int) bool { return fls[i].Name < fls[j].Name })
	for _, fl := range fls {
		arg, usage := flag.UnquoteUsage(fl)
		fmt.Fprintf(f.out, "  -%s %s\n", fl.Name, arg)
		fmt.Fprintf(f.out, "        %s\n", usage)
		if fl.Name != "version" {
			fmt.Fprintf(f.out, "        env %s, default %q\n", f.EnvName(fl.Name), fl.DefValue)
		}
	}
}

// Main runs run with a context cancelled on SIGINT or SIGTERM, prints a returned
// error as one line on stderr and exits non-zero (2 for usage errors). It is the
// whole body of every main function.
func Main(binary string, run func(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout)
	stop()
	var xe *ExitError
	if err != nil && !errors.Is(err, ErrHelp) && (!errors.As(err, &xe) || xe.Err != nil) {
		fmt.Fprintf(os.Stderr, "%s: %v\n", binary, err)
	}
	if code := ExitCode(err); code != 0 {
		os.Exit(code)
	}
}

// ExitCode is the status Main exits with for err: 0 for nil and ErrHelp,
// an *ExitError's Code, 2 for a *UsageError, else 1.
func ExitCode(err error) int {
	var xe *ExitError
	switch {
	case err == nil, errors.Is(err, ErrHelp):
		return 0
	case errors.As(err, &xe):
		return xe.Code
	case errors.As(err, new(*UsageError)):
		return 2
	}
	return 1
}

// ExitError ends the program with Code, printing Err first unless it is
// nil: a command whose status says more than failed or not (`hms diff`
// exits 1 when there are changes, 2 or more on error).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// UsageError marks a bad flag or flag value.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a *UsageError with a formatted message.
func Usagef(format string, a ...any) error { return &UsageError{Err: fmt.Errorf(format, a...)} }

// ParseOrUsage is Parse with failures wrapped as *UsageError.
func (f *FlagSet) ParseOrUsage(args []string) error {
	err := f.Parse(args)
	if err != nil && !errors.Is(err, ErrHelp) {
		return &UsageError{Err: err}
	}
	return err
}

// NewLogger returns a text slog logger on w at level.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}
