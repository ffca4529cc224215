package lease

import (
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
