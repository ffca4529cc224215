package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/cli"
)

func TestRefusesATerminal(t *testing.T) {
	var out bytes.Buffer
	tty := func(io.Writer) bool { return true }
	err := generate(nil, func(string) string { return "" }, &out, tty)
	if !errors.As(err, new(*cli.UsageError)) || !strings.Contains(err.Error(), "terminal") || out.Len() > 0 {
		t.Fatalf("err = %v, %d bytes written; want a usage error about the terminal and nothing written", err, out.Len())
	}
	p := filepath.Join(t.TempDir(), "d.json")
	if err := generate([]string{"-nodes", "3", "-out", p}, func(string) string { return "" }, &out, tty); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); !bytes.Contains(b, []byte(`"Hardware"`)) {
		t.Fatalf("dump %q", b)
	}
	if err := generate([]string{"-nodes", "3"}, func(string) string { return "" }, &out, isTerminal); err != nil || out.Len() == 0 {
		t.Fatalf("to a buffer: err %v, %d bytes", err, out.Len())
	}
	// A regular file is no terminal.
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("a regular file is taken for a terminal")
	}
}
