package main

import (
	"cmp"
	"crypto/rand"
	"fmt"

	"github.com/gosnmp/gosnmp"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/snmpsim"
	"github.com/hmsuite/hms/internal/snmpusm"
)

// simSNMPFlags are how `hms sim`'s switches answer SNMP.
type simSNMPFlags struct {
	version, user, authProto, authKey, privProto, privKey *string
}

func registerSimSNMP(f *cli.FlagSet) *simSNMPFlags {
	return &simSNMPFlags{
		version:   f.String("snmp-version", "2c", "SNMP `VERSION` the simulated switches answer: 2c (community public, reds' -snmp-community) or 3 (one USM user only; the SLS layout gives reds its credentials)"),
		user:      f.String("snmp-user", "hms-sim", "SNMPv3 user `NAME` of the switches"),
		authProto: f.String("snmp-auth-proto", "SHA", "SNMPv3 authentication `PROTOCOL`: MD5, SHA, SHA224, SHA256, SHA384 or SHA512"),
		authKey:   f.String("snmp-auth-key", "", "SNMPv3 authentication `PASSPHRASE`, 8 characters or more (default: generated at start)"),
		privProto: f.String("snmp-priv-proto", "AES", "SNMPv3 privacy `PROTOCOL`: none (authNoPriv), DES, AES, AES192, AES256, AES192C or AES256C"),
		privKey:   f.String("snmp-priv-key", "", "SNMPv3 privacy `PASSPHRASE`, 8 characters or more (default: generated at start)"),
	}
}

// v3User is the SNMPv3 user the flags name, checked; no name for 2c.
func (fl *simSNMPFlags) v3User(f *cli.FlagSet) (snmpsim.User, error) {
	switch *fl.version {
	case "2c", "v2c":
		for _, n := range []string{"snmp-user", "snmp-auth-proto", "snmp-auth-key", "snmp-priv-proto", "snmp-priv-key"} {
			if f.IsSet(n) {
				return snmpsim.User{}, cli.Usagef("-%s needs -snmp-version 3", n)
			}
		}
		return snmpsim.User{}, nil
	case "3", "v3":
	default:
		return snmpsim.User{}, cli.Usagef("-snmp-version %q: want 2c or 3", *fl.version)
	}
	auth, err := snmpusm.ParseAuth(*fl.authProto)
	if err != nil {
		return snmpsim.User{}, cli.Usagef("-snmp-auth-proto: %v", err)
	}
	priv, err := snmpusm.ParsePriv(*fl.privProto)
	if err != nil {
		return snmpsim.User{}, cli.Usagef("-snmp-priv-proto: %v", err)
	}
	u := snmpsim.User{Name: *fl.user, AuthProtocol: auth, AuthPassphrase: cmp.Or(*fl.authKey, rand.Text()),
		PrivProtocol: priv, PrivPassphrase: cmp.Or(*fl.privKey, rand.Text())}
	if priv == gosnmp.NoPriv {
		u.PrivPassphrase = ""
	}
	if _, err := snmpsim.NewAgent(snmpsim.Config{Users: []snmpsim.User{u}}); err != nil {
		return snmpsim.User{}, cli.Usagef("-snmp-*: %v", err)
	}
	return u, nil
}

// describeSNMP says how the switches answer, without the passphrases.
func describeSNMP(u snmpsim.User) string {
	if u.Name == "" {
		return "switches SNMP v2c community public"
	}
	return fmt.Sprintf("switches SNMPv3 user %s %v/%v", u.Name, u.AuthProtocol, u.PrivProtocol)
}
