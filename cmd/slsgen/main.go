// Command slsgen writes a synthetic SLS dump (the /dumpstate format) of a
// River system with the given number of nodes, for benchmarks and load tests:
//
//	slsgen -nodes 100000 -out sls-100k.json
//	curl -F sls_dump=@sls-100k.json http://127.0.0.1:8376/v1/loadstate
//
// It refuses to write to a terminal: 100,000 nodes are about 50 MB of JSON.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/slsgen"
)

func main() { cli.Main("slsgen", run) }

func run(_ context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	return generate(args, getenv, stdout, isTerminal)
}

// generate is run with the terminal test injected.
func generate(args []string, getenv func(string) string, stdout io.Writer, terminal func(io.Writer) bool) (err error) {
	f := cli.NewFlagSet("slsgen", getenv, stdout)
	nodes := f.Int("nodes", 100000, "number of nodes in the generated system")
	out := f.String("out", "-", "file to write the dump to; - is standard output (refused when it is a terminal)")
	if err := f.ParseOrUsage(args); err != nil {
		return err
	}
	if *nodes < 0 {
		return &cli.UsageError{Err: errors.New("-nodes must not be negative")}
	}
	w := stdout
	if *out == "-" && terminal(stdout) {
		return cli.Usagef("standard output is a terminal: give -out FILE, or redirect (slsgen -nodes %d > sls.json)", *nodes)
	}
	if *out != "-" {
		file, err := os.Create(*out)
		if err != nil {
			return fmt.Errorf("create %s: %w", *out, err)
		}
		defer func() {
			if cerr := file.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("write %s: %w", *out, cerr)
			}
		}()
		w = file
	}
	return slsgen.Write(w, *nodes)
}

// isTerminal reports whether w is a file open on a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
