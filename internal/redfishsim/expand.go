package redfishsim

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
)

// Tokens in a templated tree look like "@@kind:key@@" and sit inside JSON
// strings; expand replaces them with values derived from the BMC's xname.
const tokenMark = "@@"

// expand returns body with every token replaced for xname, the MACs named
// in macs (by key, "bmc:eth0") taken from there. Bodies without a token are
// returned as they are, without copying.
func expand(body []byte, xname string, macs map[string]string) []byte {
	mark := []byte(tokenMark)
	i := bytes.Index(body, mark)
	if i < 0 {
		return body
	}
	out := make([]byte, 0, len(body)+64)
	for i >= 0 {
		end := bytes.Index(body[i+2:], mark)
		if end < 0 {
			break
		}
		out = append(out, body[:i]...)
		tok := body[i : i+2+end+2]
		if v, ok := tokenValue(string(tok[2:len(tok)-2]), xname, macs); ok {
			out = appendJSONString(out, v)
		} else {
			out = append(out, tok...)
		}
		body = body[i+2+end+2:]
		i = bytes.Index(body, mark)
	}
	return append(out, body...)
}

// appendJSONString appends s escaped for the inside of a JSON string, where
// tokens sit, so that an xname with quotes cannot break the body.
func appendJSONString(out []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes
	return append(out, q[1:len(q)-1]...)
}

// tokenValue is the value of one token for xname: "xname", "mac:<key>"
// (macs[key] if set), "uuid:<key>" or "serial:<key>"; ok is false for
// anything else, which stays.
func tokenValue(tok, xname string, macs map[string]string) (v string, ok bool) {
	kind, key, _ := strings.Cut(tok, ":")
	switch kind {
	case "xname":
		return xname, true
	case "mac":
		if m, ok := macs[key]; ok {
			return m, true
		}
		return MAC(xname, key), true
	case "uuid":
		return UUID(xname, key), true
	case "serial":
		h := digest(xname, "serial:"+key)
		return fmt.Sprintf("SIM%X", h[:6]), true
	}
	return "", false
}

func digest(xname, key string) [32]byte {
	return sha256.Sum256([]byte(xname + "\x00" + key))
}

// MAC is the MAC address the generated model gives the interface named key
// (e.g. "s0:eth1" for system 0's second NIC, "bmc:eth0" for the BMC) of the BMC
// at xname: a hash of both, marked locally administered and unicast, written
// as lower-case colon-separated hex.
func MAC(xname, key string) string {
	h := digest(xname, "mac:"+key)
	h[0] = h[0]&^0x01 | 0x02
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", h[0], h[1], h[2], h[3], h[4], h[5])
}

// UUID is the RFC 9562 version 8 UUID the generated model gives the resource
// named key of the BMC at xname.
func UUID(xname, key string) string {
	h := digest(xname, "uuid:"+key)
	h[6] = h[6]&0x0f | 0x80
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}
