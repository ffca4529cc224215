package redfishsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
)

// Errors of the mutation helpers; the handlers map them to Redfish errors.
var (
	errNotFound    = errors.New("resource not found")
	errNotWritable = errors.New("property is read-only")
	errMalformed   = errors.New("body is not a JSON object")
)

// lookupLocked returns the current body of the resource at canonical path p:
// the changed copy if there is one, else the tree's (tokens filled in).
// b.mu must be held (New calls it before the BMC is shared).
func (b *BMC) lookupLocked(p string) (body []byte, isXML, ok bool) {
	b.settleLocked(p)
	if body, ok := b.changed[p]; ok {
		return body, false, true
	}
	r, ok := b.tree.res[p]
	if !ok {
		return nil, false, false
	}
	if b.tree.templated {
		return expand(r.body, b.xname, b.macs), r.xml, true
	}
	return r.body, r.xml, true
}

// lookup is lookupLocked under the lock.
func (b *BMC) lookup(p string) (body []byte, isXML, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lookupLocked(p)
}

// modifyLocked decodes the resource at p, lets fn change it and stores the
// result as the BMC's own copy. Nothing is stored if fn fails. b.mu must be held.
func (b *BMC) modifyLocked(p string, fn func(map[string]any) error) error {
	body, isXML, ok := b.lookupLocked(p)
	if !ok || isXML {
		return fmt.Errorf("%s: %w", p, errNotFound)
	}
	m, err := decodeObject(body)
	if err != nil {
		return fmt.Errorf("%s: stored body: %w", p, err)
	}
	if err := fn(m); err != nil {
		return err
	}
	out, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("%s: encode: %w", p, err)
	}
	if b.changed == nil {
		b.changed = map[string][]byte{}
	}
	b.changed[p] = out
	return nil
}

// decodeObject parses a JSON object, keeping numbers as written.
func decodeObject(body []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, errMalformed
	}
	if dec.More() {
		return nil, errMalformed
	}
	return m, nil
}

// readOnly are properties a PATCH may not change: identity, structure, and
// PowerState, which only a Reset action changes.
func readOnly(name string) bool {
	switch name {
	case "Id", "Actions", "Links", "Members", "PowerState":
		return true
	}
	return strings.HasPrefix(name, "@odata.") || strings.HasPrefix(name, "Members@")
}

// mergePatch applies a Redfish PATCH body to m: objects merge property by
// property, anything else (null included) replaces. Top-level read-only
// properties are refused before anything changes.
func mergePatch(m, patch map[string]any) error {
	for k := range patch {
		if readOnly(k) {
			return fmt.Errorf("%s: %w", k, errNotWritable)
		}
	}
	mergeInto(m, patch)
	return nil
}

func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		sub, isObj := v.(map[string]any)
		old, wasObj := dst[k].(map[string]any)
		if isObj && wasObj {
			mergeInto(old, sub)
			continue
		}
		dst[k] = v
	}
}

// etag is the entity tag of a body: a hash of its bytes.
func etag(body []byte) string {
	h := fnv.New64a()
	h.Write(body)
	return fmt.Sprintf(`W/"%016x"`, h.Sum64())
}

// etagMatches reports whether an If-Match or If-None-Match header value lists
// tag ("*" matches anything). Weak and strong forms compare equal, as BMCs and
// clients mix them.
func etagMatches(header, tag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == strings.TrimPrefix(tag, "W/") {
			return true
		}
	}
	return false
}
