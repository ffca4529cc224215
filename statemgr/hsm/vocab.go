package hsm

import (
	"slices"
	"strings"
)

// Enum is a closed set of canonical spellings matched without regard to case.
type Enum struct {
	// Field names the enum in error messages ("State", "Role", ...).
	Field  string
	Values []string
	alias  map[string]string
}

// With returns e with extra values appended (blank ones and duplicates of
// existing values, ignoring case, are dropped).
func (e Enum) With(extra []string) Enum {
	out := Enum{Field: e.Field, Values: slices.Clone(e.Values), alias: e.alias}
	for _, v := range extra {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		if _, dup := out.Normalize(v); !dup {
			out.Values = append(out.Values, v)
		}
	}
	return out
}

// Normalize returns the canonical spelling of s, or false if s is not a value.
func (e *Enum) Normalize(s string) (string, bool) {
	for _, v := range e.Values {
		if strings.EqualFold(v, s) {
			return v, true
		}
	}
	if v, ok := e.alias[strings.ToLower(s)]; ok {
		return v, true
	}
	return "", false
}

// The enumerations HSM validates, with the values /service/values reports.
// Roles and SubRoles are the built-in values; a site can add to them (see
// Vocab).
var (
	States   = Enum{Field: "State", Values: []string{StateUnknown, StateEmpty, StatePopulated, StateOff, StateOn, StateStandby, StateHalt, StateReady}}
	Flags    = Enum{Field: "Flag", Values: []string{FlagUnknown, FlagOK, FlagWarning, FlagAlert, FlagLocked}, alias: map[string]string{"warn": FlagWarning}}
	Roles    = Enum{Field: "Role", Values: []string{"Compute", "Service", "System", "Application", "Storage", "Management"}}
	SubRoles = Enum{Field: "SubRole", Values: []string{"Master", "Worker", "Storage"}}
	NetTypes = Enum{Field: "NetType", Values: []string{"Sling", "Infiniband", "Ethernet", "OEM", "None"}}
	Arches   = Enum{Field: "Arch", Values: []string{"X86", "ARM", "UNKNOWN", "Other"}}
	Classes  = Enum{Field: "Class", Values: []string{"River", "Mountain", "Hill"}}
)

// Values is the body of GET /service/values: every enumeration HSM validates.
type Values struct {
	Arch    []string `json:"Arch,omitempty"`
	Class   []string `json:"Class,omitempty"`
	Flag    []string `json:"Flag,omitempty"`
	NetType []string `json:"NetType,omitempty"`
	Role    []string `json:"Role,omitempty"`
	SubRole []string `json:"SubRole,omitempty"`
	State   []string `json:"State,omitempty"`
	Type    []string `json:"Type,omitempty"`
}
