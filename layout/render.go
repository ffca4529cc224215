package layout

import (
	"encoding/json"
	"strconv"
	"time"
)

// appendEntry appends the wire JSON of e, whose stored children are kids.
// It is written by hand, not with encoding/json, because searches of a large
// system render 100,000 objects per request. Every string it writes is an
// xname, a type or class constant or a formatted time, none of which needs
// escaping; ExtraProperties was compacted when stored.
func appendEntry(b []byte, e *entry, kids []*entry) []byte {
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
		b = append(b, e.extra...)
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
