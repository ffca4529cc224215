package lease

import (
	"encoding/json"
	"testing"
	"time"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	in := Event{Kind: Commit, MACAddress: "AA-BB-CC-00-11-22", IPAddress: "10.1.0.5",
		Arch: "x86_64", Time: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)}
	b, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if out.MACAddress != "aa:bb:cc:00:11:22" || out.IPAddress != in.IPAddress || !out.Time.Equal(in.Time) || out.Kind != Commit {
		t.Fatalf("round trip: %+v", out)
	}
	if Key("AA:BB:CC:00:11:22") != "aa:bb:cc:00:11:22" {
		t.Fatal("key not normalised")
	}
}

func TestDecodeRefusesEventWithoutMAC(t *testing.T) {
	if _, err := Decode([]byte(`{"IPAddress":"10.0.0.1"}`)); err == nil {
		t.Fatal("accepted an event without MAC")
	}
	if _, err := Decode([]byte(`{`)); err == nil {
		t.Fatal("accepted malformed JSON")
	}
}

// FuzzAppendIsJSON: the hand-written encoder writes what encoding/json
// writes, for any strings and times.
func FuzzAppendIsJSON(f *testing.F) {
	f.Add("02:00:00:00:00:01", "node<&>\"\\\x01\xff\u2028é", "PXEClient:Arch:00000", int64(1795000000123456789), int64(0), true, false)
	f.Add("", "", "", int64(-62135596800000000), int64(1), false, true)
	f.Fuzz(func(t *testing.T, mac, host, vc string, exp, at int64, known, local bool) {
		loc := time.UTC
		if local {
			loc = time.FixedZone("X", 3600)
		}
		e := Event{Kind: Kind(vc), MACAddress: mac, IPAddress: host, Hostname: host, VendorClass: vc, Arch: mac,
			Subnet: vc, Relay: host, Known: known, Expires: time.Unix(0, exp).In(loc), Time: time.Unix(at, 0).UTC()}
		want, wantErr := json.Marshal(e)
		got, err := Append([]byte("x"), e)
		if (err != nil) != (wantErr != nil) || err == nil && string(got) != "x"+string(want) {
			t.Fatalf("Append = %s, %v\njson   = %s, %v", got, err, want, wantErr)
		}
	})
}
