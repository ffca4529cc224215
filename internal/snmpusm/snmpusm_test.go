package snmpusm

import (
	"testing"

	"github.com/gosnmp/gosnmp"
)

func TestParseAuth(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    gosnmp.SnmpV3AuthProtocol
		wantErr bool
	}{
		{in: "MD5", want: gosnmp.MD5},
		{in: "sha", want: gosnmp.SHA},
		{in: "SHA1", want: gosnmp.SHA},
		{in: "SHA224", want: gosnmp.SHA224},
		{in: "SHA-256", want: gosnmp.SHA256},
		{in: "sha384", want: gosnmp.SHA384},
		{in: "SHA512", want: gosnmp.SHA512},
		{in: "", wantErr: true},
		{in: "SHA3", wantErr: true},
	} {
		got, err := ParseAuth(tc.in)
		if (err != nil) != tc.wantErr || (!tc.wantErr && got != tc.want) {
			t.Errorf("ParseAuth(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
		// The SLS spelling reads back as itself.
		if err == nil {
			if back, err := ParseAuth(got.String()); err != nil || back != got {
				t.Errorf("ParseAuth(%q) = %v, %v; want %v", got.String(), back, err, got)
			}
		}
	}
}

func TestParsePriv(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    gosnmp.SnmpV3PrivProtocol
		wantErr bool
	}{
		{in: "none", want: gosnmp.NoPriv},
		{in: "NoPriv", want: gosnmp.NoPriv},
		{in: "DES", want: gosnmp.DES},
		{in: "aes", want: gosnmp.AES},
		{in: "AES128", want: gosnmp.AES},
		{in: "AES-192", want: gosnmp.AES192},
		{in: "AES256", want: gosnmp.AES256},
		{in: "AES192C", want: gosnmp.AES192C},
		{in: "aes256c", want: gosnmp.AES256C},
		{in: "", wantErr: true},
		{in: "3DES", wantErr: true},
	} {
		got, err := ParsePriv(tc.in)
		if (err != nil) != tc.wantErr || (!tc.wantErr && got != tc.want) {
			t.Errorf("ParsePriv(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err == nil {
			if back, err := ParsePriv(got.String()); err != nil || back != got {
				t.Errorf("ParsePriv(%q) = %v, %v; want %v", got.String(), back, err, got)
			}
		}
	}
}
