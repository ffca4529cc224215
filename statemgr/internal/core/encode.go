package core

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// appendRecord appends the JSON of r, projected, to b. It is hand-written
// because listing 100,000 components through encoding/json's reflection costs
// several times more than the rest of the request.
func appendRecord(b []byte, r *Record, p Projection) []byte {
	b = append(b, `{"ID":`...)
	b = AppendString(b, r.ID)
	b = append(b, `,"Type":`...)
	b = AppendString(b, r.Type)
	switch p {
	case ProjectState:
		b = appendOpt(b, "State", r.State)
		b = appendOpt(b, "Flag", r.Flag)
	case ProjectFlag:
		b = appendOpt(b, "Flag", r.Flag)
	case ProjectRole:
		b = appendOpt(b, "Role", r.Role)
		b = appendOpt(b, "SubRole", r.SubRole)
	case ProjectNID:
		b = appendNID(b, r)
	default:
		b = appendOpt(b, "State", r.State)
		b = appendOpt(b, "Flag", r.Flag)
		b = append(b, `,"Enabled":`...)
		b = strconv.AppendBool(b, r.Enabled)
		b = appendOpt(b, "SoftwareStatus", r.SoftwareStatus)
		b = appendOpt(b, "Role", r.Role)
		b = appendOpt(b, "SubRole", r.SubRole)
		b = appendNID(b, r)
		b = appendOpt(b, "Subtype", r.Subtype)
		b = appendOpt(b, "NetType", r.NetType)
		b = appendOpt(b, "Arch", r.Arch)
		b = appendOpt(b, "Class", r.Class)
		if r.ReservationDisabled {
			b = append(b, `,"ReservationDisabled":true`...)
		}
		if r.Locked {
			b = append(b, `,"Locked":true`...)
		}
	}
	return append(b, '}')
}

func appendNID(b []byte, r *Record) []byte {
	if !r.HasNID {
		return b
	}
	b = append(b, `,"NID":`...)
	return strconv.AppendInt(b, int64(r.NID), 10)
}

func appendOpt(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return AppendString(b, v)
}

// AppendString appends s as a JSON string; the common plain-ASCII case is a
// copy, anything else goes through encoding/json.
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// EncodeList returns {"Components":[...]} for the records f matches.
func EncodeList(all []*Record, f *Filter) []byte {
	size := 160 // a full component is about 150 bytes
	if f.Projection != ProjectFull {
		size = 64
	}
	b := make([]byte, 0, 64+len(all)*size)
	b = append(b, `{"Components":[`...)
	first := true
	for _, r := range all {
		if !f.Match(r) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendRecord(b, r, f.Projection)
	}
	return append(b, "]}\n"...)
}
