// Package cli is the command-line surface shared by every binary of the suite:
// flags with an environment twin each (HMS_<BINARY>_<FLAG>, dashes as
// underscores), values validated when parsed so a bad one stops the program before
// any port is bound, the logger, and the signal handling around a run function.
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
)

// FlagSet is a flag.FlagSet whose flags also read HMS_<BINARY>_<FLAG> from the
// environment; a flag given on the command line wins over its env twin.
type FlagSet struct {
	*flag.FlagSet
	// Program is the command shown by -help; it defaults to the binary name
	// (a subcommand sets "hms up" while its env twins stay HMS_UP_*).
	Program string
	binary  string
	getenv  func(string) string
	out     io.Writer
}

// NewFlagSet returns a FlagSet for binary; getenv is usually os.Getenv, and out
// receives --help output.
func NewFlagSet(binary string, getenv func(string) string, out io.Writer) *FlagSet {
	fs := flag.NewFlagSet(binary, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := &FlagSet{FlagSet: fs, Program: binary, binary: binary, getenv: getenv, out: out}
	// The flag package calls Usage on every parse error; the usage text is
	// printed only for -help (in Parse), so a bad value stays a one-line error.
	fs.Usage = func() {}
	return f
}

// EnvName is the environment twin of the named flag, e.g. HMS_HBTD_HSM_URL.
func (f *FlagSet) EnvName(flagName string) string {
	return "HMS_" + envPart(f.binary) + "_" + envPart(flagName)
}

func envPart(s string) string {
	return strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(s))
}

// ErrHelp is returned by Parse when -h or --help was asked for; the usage text
// has been written and the program should exit 0.
var ErrHelp = flag.ErrHelp

// Parse applies environment twins first and then args. Errors are one line.
func (f *FlagSet) Parse(args []string) error {
	var errs []error
	f.VisitAll(func(fl *flag.Flag) {
		name := f.EnvName(fl.Name)
		v := f.getenv(name)
		if v == "" {
			return
		}
		if err := fl.Value.Set(v); err != nil {
			errs = append(errs, fmt.Errorf("invalid value %q for %s: %v", v, name, err))
		}
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
	if f.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (flags only; see -help)", f.Arg(0))
	}
	return nil
}

// usage lists every flag with its env twin and default, sorted by name.
func (f *FlagSet) usage() {
	fmt.Fprintf(f.out, "Usage: %s [flags]\n\nEvery flag can also be set from the environment variable shown; a flag on the\ncommand line wins.\n\nFlags:\n", f.Program)
	var fls []*flag.Flag
	f.VisitAll(func(fl *flag.Flag) { fls = append(fls, fl) })
	sort.Slice(fls, func(i, j int) bool { return fls[i].Name < fls[j].Name })
	for _, fl := range fls {
		arg, usage := flag.UnquoteUsage(fl)
		fmt.Fprintf(f.out, "  -%s %s\n", fl.Name, arg)
		fmt.Fprintf(f.out, "        %s\n", usage)
		fmt.Fprintf(f.out, "        env %s, default %q\n", f.EnvName(fl.Name), fl.DefValue)
	}
}

// Main runs run with a context cancelled on SIGINT or SIGTERM, prints a returned
// error as one line on stderr and exits non-zero (2 for usage errors). It is the
// whole body of every main function.
func Main(binary string, run func(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout)
	stop()
	switch {
	case err == nil, errors.Is(err, ErrHelp):
		return
	case errors.As(err, new(*UsageError)):
		fmt.Fprintf(os.Stderr, "%s: %v\n", binary, err)
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "%s: %v\n", binary, err)
		os.Exit(1)
	}
}

// UsageError marks a bad flag or flag value.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

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
