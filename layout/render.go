package layout

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// appendEntry appends the wire JSON of e, whose stored children are kids.
// It is written by hand, not with encoding/json, because searches of a large
// system render 100,000 objects per request. Every string it writes is an
// xname, a type or class constant or a formatted time, none of which needs
// escaping; ExtraProperties was compacted when stored. The ExtraProperties
// keys in redact are rendered with the value "" (redactExtra).
func appendEntry(b []byte, e *entry, kids []*entry, redact map[string]bool) []byte {
	b = append(b, `{"Parent":"`...)
	b = append(b, e.parent...)
	b = append(b, '"')
	if len(kids) > 0 {
		b = append(b, `,"Children":[`...)
		for i, k := range kids {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, k.xname...)
			b = append(b, '"')
		}
		b = append(b, ']')
	}
	b = append(b, `,"Xname":"`...)
	b = append(b, e.xname...)
	b = append(b, `","Type":"`...)
	b = append(b, e.stype...)
	b = append(b, `","Class":"`...)
	b = append(b, e.class...)
	b = append(b, `","TypeString":"`...)
	b = append(b, e.htype...)
	b = append(b, `","LastUpdated":`...)
	b = strconv.AppendInt(b, unixSeconds(e.updated), 10)
	b = append(b, `,"LastUpdatedTime":"`...)
	b = append(b, e.updatedTime...)
	b = append(b, '"')
	if len(e.extra) > 0 {
		b = append(b, `,"ExtraProperties":`...)
		b = append(b, redactExtra(e.extra, redact)...)
	}
	return append(b, '}')
}

// toHardware converts e to its wire struct; used off the hot paths.
func toHardware(e *entry, kids []*entry) Hardware {
	h := Hardware{
		Parent: e.parent, Xname: e.xname, Type: e.stype, Class: e.class, TypeString: e.htype,
		LastUpdated: unixSeconds(e.updated), LastUpdatedTime: e.updatedTime,
	}
	for _, k := range kids {
		h.Children = append(h.Children, k.xname)
	}
	if len(e.extra) > 0 {
		h.ExtraProperties = json.RawMessage(e.extra)
	}
	return h
}

// unixSeconds is LastUpdated (Unix seconds) of a stored time in Unix
// microseconds.
func unixSeconds(micros int64) int64 { return time.UnixMicro(micros).Unix() }

// SetRedactedProperties makes every rendered answer (GET /hardware,
// /hardware/{xname}, /search/hardware, /dumpstate) carry "" as the value of
// the named top-level ExtraProperties keys, e.g. Password; what is stored is
// unchanged, so searches and /loadstate round trips still see the real
// values. Call it before serving.
func (s *Store) SetRedactedProperties(keys []string) {
	s.redact = nil
	for _, k := range keys {
		if s.redact == nil {
			s.redact = map[string]bool{}
		}
		s.redact[k] = true
	}
}

// redactExtra returns extra with the keys in redact set to "". The object is
// re-encoded only when one of the keys appears in it; re-encoding sorts the
// keys, as the shipped SLS (a Go map) renders them anyway.
func redactExtra(extra []byte, redact map[string]bool) []byte {
	if len(redact) == 0 {
		return extra
	}
	var m map[string]json.RawMessage
	hit := false
	for k := range redact {
		if bytes.Contains(extra, []byte(strconv.Quote(k))) {
			hit = true
			break
		}
	}
	if !hit || json.Unmarshal(extra, &m) != nil {
		return extra
	}
	changed := false
	for k := range redact {
		if _, ok := m[k]; ok {
			m[k] = json.RawMessage(`""`)
			changed = true
		}
	}
	if !changed {
		return extra
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if enc.Encode(m) != nil {
		return extra
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}
