package redfishsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Root is the path of the Redfish service root every tree is served under.
const Root = "/redfish/v1"

// Tree is an immutable Redfish resource tree: resource bodies keyed by their
// canonical path (e.g. "/redfish/v1/Systems/1", no trailing slash; the service
// root is "/redfish/v1"). One Tree may be shared by any number of BMCs, which
// keep their own changes beside it.
//
// A templated tree (see Template) holds tokens such as "@@mac:s0:eth0@@" that a
// BMC replaces with values derived from its xname when it serves a body.
type Tree struct {
	res       map[string]resource
	templated bool
}

// resource is one stored body; xml marks the CSDL $metadata document.
type resource struct {
	body []byte
	xml  bool
}

// Paths returns the canonical paths of every resource in t, sorted.
func (t *Tree) Paths() []string {
	out := make([]string, 0, len(t.res))
	for p := range t.res {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Has reports whether t holds a resource at the canonical form of p.
func (t *Tree) Has(p string) bool {
	_, ok := t.res[Canonical(p)]
	return ok
}

// Len is the number of resources in t.
func (t *Tree) Len() int { return len(t.res) }

// children returns the paths directly below p, sorted.
func (t *Tree) children(p string) []string {
	var out []string
	prefix := p + "/"
	for k := range t.res {
		if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "" && !strings.Contains(rest, "/") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Canonical maps a request path to the key resources are stored under: the
// fragment and query are dropped, duplicate and trailing slashes removed, and
// "." and ".." segments resolved so a path can never leave the tree.
func Canonical(p string) string {
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	p = path.Clean("/" + p)
	return p
}

// LoadMockup reads a DMTF short-form mockup directory, in which the directory
// itself stands for /redfish/v1 and each resource is <path>/index.json (the
// CSDL document is $metadata/index.xml). Other .json files (such as message
// registries) are served under their own file name. Every JSON body is
// checked, so a broken mockup fails here rather than in a client.
func LoadMockup(dir string) (*Tree, error) {
	return loadFS(os.DirFS(dir), dir)
}

// loadFS is LoadMockup over any file system; name is only used in errors.
func loadFS(fsys fs.FS, name string) (*Tree, error) {
	t := &Tree{res: map[string]resource{}}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		key, isXML, ok := mockupKey(p)
		if !ok {
			return nil
		}
		body, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		if !isXML {
			if !json.Valid(body) {
				return fmt.Errorf("%s: not valid JSON", p)
			}
			var buf bytes.Buffer
			if err := json.Compact(&buf, body); err == nil {
				body = buf.Bytes()
			}
		}
		t.res[key] = resource{body: body, xml: isXML}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load mockup %s: %w", name, err)
	}
	if _, ok := t.res[Root]; !ok {
		return nil, fmt.Errorf("load mockup %s: no service root (index.json) at the top", name)
	}
	return t, nil
}

// mockupKey maps a slash-separated file path inside a mockup directory to the
// resource path it serves; ok is false for files that are not resources.
func mockupKey(file string) (key string, isXML, ok bool) {
	dir, base := path.Split(file)
	dir = strings.TrimSuffix(dir, "/")
	switch {
	case base == "index.json":
		return Canonical(Root + "/" + dir), false, true
	case base == "index.xml":
		return Canonical(Root + "/" + dir), true, true
	case dir == "" && base == "explorer_config.json":
		return "", false, false // a tool's settings, not a resource
	case filepath.Ext(base) == ".json":
		return Canonical(Root + "/" + file), false, true
	}
	return "", false, false
}
