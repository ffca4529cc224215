// Package snmpusm names the SNMPv3 USM (RFC 3414) authentication and
// privacy protocols: the one table from the spellings operators, SLS and
// net-snmp use to gosnmp's constants, shared by reds (the SNMPAuthProtocol
// and SNMPPrivProtocol of a switch in SLS), the SNMP simulator and `hms
// sim`'s flags, so a name one accepts the others accept too.
package snmpusm

import (
	"fmt"
	"strings"

	"github.com/gosnmp/gosnmp"
)

// ParseAuth reads an authentication protocol as net-snmp (-a SHA-256) and
// SLS's SNMPAuthProtocol (SHA256) spell it, in any case: MD5, SHA (SHA1),
// SHA224, SHA256, SHA384, SHA512. Its String is the SLS spelling.
func ParseAuth(s string) (gosnmp.SnmpV3AuthProtocol, error) {
	switch strings.ReplaceAll(strings.ToUpper(s), "-", "") {
	case "MD5":
		return gosnmp.MD5, nil
	case "SHA", "SHA1":
		return gosnmp.SHA, nil
	case "SHA224":
		return gosnmp.SHA224, nil
	case "SHA256":
		return gosnmp.SHA256, nil
	case "SHA384":
		return gosnmp.SHA384, nil
	case "SHA512":
		return gosnmp.SHA512, nil
	}
	return 0, fmt.Errorf("authentication protocol %q: want MD5, SHA, SHA224, SHA256, SHA384 or SHA512", s)
}

// ParsePriv reads a privacy protocol the same way: none (authNoPriv),
// DES, AES (AES128), AES192, AES256 (Blumenthal key extension), AES192C,
// AES256C (Reeder). Its String is the SLS spelling (NoPriv for none).
func ParsePriv(s string) (gosnmp.SnmpV3PrivProtocol, error) {
	switch strings.ReplaceAll(strings.ToUpper(s), "-", "") {
	case "NONE", "NOPRIV":
		return gosnmp.NoPriv, nil
	case "DES":
		return gosnmp.DES, nil
	case "AES", "AES128":
		return gosnmp.AES, nil
	case "AES192":
		return gosnmp.AES192, nil
	case "AES256":
		return gosnmp.AES256, nil
	case "AES192C":
		return gosnmp.AES192C, nil
	case "AES256C":
		return gosnmp.AES256C, nil
	}
	return 0, fmt.Errorf("privacy protocol %q: want none, DES, AES, AES192, AES256, AES192C or AES256C", s)
}
