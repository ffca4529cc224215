package ctl

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/nodes/wire"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/apply")

// golden compares got with testdata/apply/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "apply", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// manifestText is what readManifest read: the resources as the daemon
// gets them, then the warnings and the sorted errors, one a line.
func manifestText(t *testing.T, name string, stdin string) []byte {
	t.Helper()
	m, errs := readManifest(name, strings.NewReader(stdin))
	var b bytes.Buffer
	if len(m.decls) > 0 && len(errs) == 0 {
		out, err := json.MarshalIndent(resources(m.decls), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		b.Write(out)
		b.WriteString("\n")
	}
	for _, w := range m.warnings {
		b.WriteString("warning: " + w.Error() + "\n")
	}
	sortErrors(errs)
	for _, e := range errs {
		b.WriteString(e.Error() + "\n")
	}
	return b.Bytes()
}

// TestReadManifest: each file reads into the resources it declares, or
// into one error line per problem, each at its file and line.
func TestReadManifest(t *testing.T) {
	dir := filepath.Join("testdata", "apply")
	for _, tt := range []struct{ name, file string }{
		{name: "good.yaml", file: "good.yaml"},
		{name: "good.json", file: "good.json"},
		{name: "ochami.yaml", file: "ochami.yaml"},
		{name: "bad.yaml", file: "bad.yaml"},
		{name: "dup.yaml", file: "dup.yaml"},
		{name: "invalid.yaml", file: "invalid.yaml"},
		{name: "dir", file: "dir"},
		{name: "missing", file: "missing.yaml"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, tt.name+".golden", manifestText(t, filepath.Join(dir, tt.file), ""))
		})
	}
}

// TestReadManifestStdin: "-" reads standard input, named <stdin>.
func TestReadManifestStdin(t *testing.T) {
	got := string(manifestText(t, "-", "kind: ComputeNode\nxname: x1000c0s0b0n0\nboot_mac: nope\n"))
	if want := "<stdin>:3: ComputeNode x1000c0s0b0n0: boot_mac \"nope\" is not a MAC address (want 02:00:00:00:10:00)\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestReadSecrets: a node's bmc_credentials_file is read relative to its
// nodes file; a bad one is an error naming no credential.
func TestReadSecrets(t *testing.T) {
	m, errs := readManifest(filepath.Join("testdata", "apply", "good.yaml"), nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	sec, errs := readSecrets(m.decls)
	if len(errs) > 0 || sec["bmc.yaml"].Username != "root" || sec["bmc.yaml"].Password != "s3cr3t-never-shown" || len(sec) != 1 {
		t.Errorf("secrets %v, errors %v", sec, errs)
	}

	dir := t.TempDir()
	write := func(name, text string) {
		mustOK(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600))
	}
	write("nodes.yaml", "kind: ComputeNode\nxname: x1000c0s0b0n0\nbmc_ip: 10.2.0.1\nbmc_credentials_file: creds.yaml\n---\n"+
		"kind: ComputeNode\nxname: x1000c0s1b0n0\nbmc_ip: 10.2.0.2\nbmc_credentials_file: none.yaml\n---\n"+
		"kind: ComputeNode\nxname: x1000c0s2b0n0\nbmc_ip: 10.2.0.3\nbmc_credentials_file: half.json\n")
	write("creds.yaml", "username: root\npassword: [hunter2]\n")
	write("half.json", `{"username": "hunter2"}`)
	m, errs = readManifest(filepath.Join(dir, "nodes.yaml"), nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	_, errs = readSecrets(m.decls)
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, strings.TrimPrefix(e.Error(), dir+"/"))
	}
	want := []string{
		"nodes.yaml:4: ComputeNode x1000c0s0b0n0: bmc_credentials_file creds.yaml: line 2: credentials: password: want a string, got a list",
		"nodes.yaml:9: ComputeNode x1000c0s1b0n0: bmc_credentials_file none.yaml: cannot read: no such file or directory",
		"nodes.yaml:14: ComputeNode x1000c0s2b0n0: bmc_credentials_file half.json: want both username and password",
	}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// FuzzParseFile: no input makes the parser panic, and what it accepts
// marshals to JSON the daemon's decoder takes back.
func FuzzParseFile(f *testing.F) {
	for _, name := range []string{"good.yaml", "good.json", "ochami.yaml", "bad.yaml", "dup.yaml", "invalid.yaml"} {
		b, err := os.ReadFile(filepath.Join("testdata", "apply", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("a: &a [*a, *a]\nkind: *a\n"))
	f.Add([]byte("- kind: NodeGroup\n  name: x\n  nodes: &n [x1c0s0b0n0]\n- kind: NodeGroup\n  name: y\n  nodes: *n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, _, errs := parseFile("fuzz.yaml", b)
		errs = append(errs, validate(ds)...)
		for _, e := range errs {
			if e.at.line < 1 || strings.Contains(e.msg, "\n") {
				t.Fatalf("error %q: want a line and one line of text", e.Error())
			}
		}
		for _, d := range ds {
			out, err := json.Marshal(d.res)
			if err != nil {
				t.Fatalf("marshal %+v: %v", d.res, err)
			}
			var back wire.Resource
			if err := json.Unmarshal(out, &back); err != nil || back.Kind != d.res.Kind || back.Name() != d.res.Name() && utf8.ValidString(d.res.Name()) {
				t.Fatalf("%s: read back %+v, %v", out, back, err)
			}
		}
	})
}
