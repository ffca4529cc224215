package ctl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hmsuite/hms/nodes/wire"
)

// A nodes file (`hms apply -f`) is YAML or JSON, one resource per document
// (`---`), or a sequence of resources in one document, each the resource's
// wire object with `kind:` at top level. It is read with yaml.v3's Node API
// rather than decoded into the wire types, so every error names the file
// and line it is about.

// pos is where something was declared: a file and a line in it.
type pos struct {
	file string
	line int
}

func (p pos) String() string {
	if p.line == 0 {
		return p.file
	}
	return p.file + ":" + strconv.Itoa(p.line)
}

// fileError is one problem with a nodes file, at a position.
type fileError struct {
	at  pos
	msg string
}

func (e fileError) Error() string { return e.at.String() + ": " + e.msg }

// decl is one resource of a nodes file and where its fields were declared.
type decl struct {
	res wire.Resource
	at  pos            // the document (its first line)
	fld map[string]pos // field name -> where its value is
	dir string         // directory of the file, for bmc_credentials_file
}

// where is the position of field name, else of the document.
func (d decl) where(name string) pos {
	if p, ok := d.fld[name]; ok {
		return p
	}
	return d.at
}

// manifest is everything a -f argument declares, in file order.
type manifest struct {
	decls    []decl
	warnings []fileError
}

// stdinName names standard input in error messages.
const stdinName = "<stdin>"

// readManifest reads and checks name: a file, a directory (its *.yaml,
// *.yml and *.json files in name order, not recursively) or "-" for stdin.
// The errors are every problem found, one per line; nothing of an invalid
// manifest is used.
func readManifest(name string, stdin io.Reader) (manifest, []fileError) {
	var m manifest
	var errs []fileError
	add := func(file, dir string, b []byte) {
		ds, w, e := parseFile(file, b)
		for i := range ds {
			ds[i].dir = dir
		}
		m.decls = append(m.decls, ds...)
		m.warnings = append(m.warnings, w...)
		errs = append(errs, e...)
	}
	files, err := manifestFiles(name)
	if err != nil {
		return m, []fileError{{at: pos{file: name}, msg: err.Error()}}
	}
	for _, f := range files {
		var b []byte
		if f == "-" {
			b, err = io.ReadAll(stdin)
			f = stdinName
		} else {
			b, err = os.ReadFile(f)
		}
		if err != nil {
			errs = append(errs, fileError{at: pos{file: f}, msg: "cannot read: " + rootCause(err).Error()})
			continue
		}
		dir := filepath.Dir(f)
		if f == stdinName {
			dir = "."
		}
		add(f, dir, b)
	}
	errs = append(errs, validate(m.decls)...)
	return m, errs
}

// manifestFiles lists the files name stands for.
func manifestFiles(name string) ([]string, error) {
	if name == "-" {
		return []string{"-"}, nil
	}
	st, err := os.Stat(name)
	if err != nil {
		return nil, errors.New("cannot read: " + rootCause(err).Error())
	}
	if !st.IsDir() {
		return []string{name}, nil
	}
	entries, err := os.ReadDir(name)
	if err != nil {
		return nil, errors.New("cannot read: " + rootCause(err).Error())
	}
	var files []string
	for _, e := range entries {
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".yaml", ".yml", ".json":
			if !e.IsDir() {
				files = append(files, filepath.Join(name, e.Name()))
			}
		}
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, errors.New("directory holds no *.yaml, *.yml or *.json file")
	}
	return files, nil
}

// parseFile reads the documents of one file. It never panics: a panic of
// the YAML library on hostile input is an error of the file.
func parseFile(file string, b []byte) (ds []decl, warns, errs []fileError) {
	defer func() {
		if r := recover(); r != nil {
			ds, errs = nil, append(errs, fileError{at: pos{file: file, line: 1}, msg: fmt.Sprintf("cannot parse: %v", r)})
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return ds, warns, errs
		}
		if err != nil {
			return ds, warns, append(errs, yamlError(file, err))
		}
		p := parser{file: file}
		p.document(&doc)
		ds, warns, errs = append(ds, p.decls...), append(warns, p.warns...), append(errs, p.errs...)
	}
}

var yamlLine = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// yamlError turns a yaml.v3 syntax error ("yaml: line 3: did not find
// expected key") into one at a file and line.
func yamlError(file string, err error) fileError {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	line := 1
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		if m[1] != "" {
			line, _ = strconv.Atoi(m[1])
		}
		msg = m[2]
	}
	return fileError{at: pos{file: file, line: line}, msg: "invalid YAML: " + msg}
}

// parser decodes the documents of one file.
type parser struct {
	file  string
	decls []decl
	warns []fileError
	errs  []fileError
}

func (p *parser) at(n *yaml.Node) pos { return pos{file: p.file, line: max(n.Line, 1)} }

func (p *parser) errorf(n *yaml.Node, format string, a ...any) {
	p.errs = append(p.errs, fileError{at: p.at(n), msg: fmt.Sprintf(format, a...)})
}

// document reads one YAML document: a resource, a sequence of resources,
// an ochami nodes file, or nothing (an empty document is skipped).
func (p *parser) document(doc *yaml.Node) {
	if len(doc.Content) == 0 {
		return
	}
	n := deref(doc.Content[0])
	switch n.Kind {
	case yaml.MappingNode:
		if lookup(n, "kind") == nil && lookup(n, "nodes") != nil {
			p.ochami(n)
			return
		}
		p.resource(n)
	case yaml.SequenceNode:
		for _, item := range n.Content {
			item = deref(item)
			if item.Kind != yaml.MappingNode {
				p.errorf(item, "want a resource (a mapping with kind:), got %s", describe(item))
				continue
			}
			p.resource(item)
		}
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return
		}
		fallthrough
	default:
		p.errorf(n, "want a resource (a mapping with kind:), got %s", describe(n))
	}
}

// resource decodes one mapping into a wire.Resource.
func (p *parser) resource(n *yaml.Node) {
	d := decl{at: p.at(n), fld: map[string]pos{}}
	kn := lookup(n, "kind")
	if kn == nil {
		p.errorf(n, "missing kind (one of %s)", kindList)
		return
	}
	var body any
	switch kind := scalar(kn); kind {
	case wire.KindComputeNode:
		d.res.ComputeNode = new(wire.ComputeNode)
		body = d.res.ComputeNode
	case wire.KindBootProfile:
		d.res.BootProfile = new(wire.BootProfile)
		body = d.res.BootProfile
	case wire.KindNodeGroup:
		d.res.NodeGroup = new(wire.NodeGroup)
		body = d.res.NodeGroup
	default:
		p.errorf(kn, "unknown kind %q (one of %s)", kind, kindList)
		return
	}
	d.res.Kind = scalar(kn)
	before := len(p.errs)
	p.fields(n, d.res.Kind, reflect.ValueOf(body).Elem(), d.fld, "kind")
	if len(p.errs) == before {
		p.decls = append(p.decls, d)
	}
}

var kindList = wire.KindComputeNode + ", " + wire.KindBootProfile + ", " + wire.KindNodeGroup

// readOnly are the wire fields the daemon sets; a file may not.
var readOnly = map[string]bool{"last_updated": true, "observed": true}

// fields sets the fields of struct v from mapping n, by their JSON names;
// the keys in skip are the caller's.
func (p *parser) fields(n *yaml.Node, kind string, v reflect.Value, fld map[string]pos, skip ...string) {
	byName := jsonFields(v)
	seen := map[string]pos{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := deref(n.Content[i]), deref(n.Content[i+1])
		name := scalar(k)
		if k.Kind != yaml.ScalarNode {
			p.errorf(k, "want a field name, got %s", describe(k))
			continue
		}
		if first, dup := seen[name]; dup {
			p.errorf(k, "field %q given twice (first at line %d)", name, first.line)
			continue
		}
		seen[name] = p.at(k)
		if slices.Contains(skip, name) {
			continue
		}
		f, ok := byName[name]
		switch {
		case readOnly[name]:
			p.errorf(k, "%s: field %s is set by the nodes daemon, not in a file", kind, name)
			continue
		case !ok:
			p.errorf(k, "%s: unknown field %q (fields: %s)", kind, name, strings.Join(fieldNames(byName), ", "))
			continue
		}
		fld[name] = p.at(val)
		p.set(f, val, kind+": "+name)
	}
}

// set decodes val into f: a string, an int or a list of strings.
func (p *parser) set(f reflect.Value, val *yaml.Node, name string) {
	if val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
		return
	}
	switch f.Kind() {
	case reflect.String:
		if val.Kind != yaml.ScalarNode {
			p.errorf(val, "%s: want a string, got %s", name, describe(val))
			return
		}
		f.SetString(val.Value)
	case reflect.Int:
		i, err := strconv.Atoi(val.Value)
		if val.Kind != yaml.ScalarNode || val.Tag != "!!int" || err != nil {
			p.errorf(val, "%s: want an integer, got %s", name, describe(val))
			return
		}
		if i < 0 {
			p.errorf(val, "%s: %d is negative", name, i)
			return
		}
		f.SetInt(int64(i))
	case reflect.Slice:
		if val.Kind != yaml.SequenceNode {
			p.errorf(val, "%s: want a list of strings, got %s", name, describe(val))
			return
		}
		var out []string
		for _, item := range val.Content {
			item = deref(item)
			if item.Kind != yaml.ScalarNode || item.Tag == "!!null" {
				p.errorf(item, "%s: want a string, got %s", name, describe(item))
				continue
			}
			out = append(out, item.Value)
		}
		f.Set(reflect.ValueOf(out))
	}
}

// jsonFields maps the JSON names of struct v's fields to the fields.
func jsonFields(v reflect.Value) map[string]reflect.Value {
	out := map[string]reflect.Value{}
	t := v.Type()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out[name] = v.Field(i)
		}
	}
	return out
}

func fieldNames(byName map[string]reflect.Value) []string {
	var names []string
	for n := range byName {
		if !readOnly[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// lookup returns the value of key in mapping n, or nil.
func lookup(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
			return deref(n.Content[i+1])
		}
	}
	return nil
}

// deref follows an alias (*name) to its anchor.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 16; i++ {
		n = n.Alias
	}
	return n
}

func scalar(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// describe names what a node is, for "want X, got Y"; it never quotes a
// value longer than a few characters.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!int":
			return "an integer"
		case "!!float":
			return "a number"
		case "!!bool":
			return "a boolean"
		}
		if len(n.Value) <= 32 {
			return strconv.Quote(n.Value)
		}
		return "a string"
	}
	return "an alias"
}
