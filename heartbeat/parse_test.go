package heartbeat

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/httpserver"
)

func TestParseTimeStamp(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2026-11-21T12:00:00Z", time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)},
		{"2026-11-21T12:00:00.5+01:00", time.Date(2026, 11, 21, 11, 0, 0, 5e8, time.UTC)},
		{"2026-11-21T12:00:00+0100", time.Date(2026, 11, 21, 11, 0, 0, 0, time.UTC)},
		{"2026-11-21T12:00:00-05", time.Date(2026, 11, 21, 17, 0, 0, 0, time.UTC)},
		{"2026-11-21 12:00:00", time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)},
		{"2026-11-21T12:00:00.123456", time.Date(2026, 11, 21, 12, 0, 0, 123456000, time.UTC)},
		{"2018-07-06T12:34:56.012345-5Z", time.Date(2018, 7, 6, 17, 34, 56, 12345000, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseTimeStamp(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tt.want) {
				t.Fatalf("got %v, want %v", got.UTC(), tt.want)
			}
		})
	}
	for _, bad := range []string{"", "now", "2026-11-21", "12:00:00", "2026-13-01T00:00:00Z", "2026-11-21T12:00:00+25:00"} {
		if _, err := parseTimeStamp(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// slowDecode is the strict encoding/json reference the fast scanner must agree with.
func slowDecode(body []byte) (beat, error, bool) {
	var wb wireBeat
	if httpserver.DecodeJSON(body, &wb) != nil {
		return beat{}, nil, false
	}
	rb := wb.raw()
	b, err := rb.validate("", "")
	return b, err, true
}

func checkDecodeAgrees(t *testing.T, body []byte) {
	got, err := decodeBeat(body, "")
	want, werr, valid := slowDecode(body)
	if !valid {
		if err == nil {
			t.Fatalf("%q: invalid JSON accepted as %+v", body, got)
		}
		return
	}
	if (err == nil) != (werr == nil) {
		t.Fatalf("%q: fast error %v, reference error %v", body, err, werr)
	}
	if got != want {
		t.Fatalf("%q: fast %+v, reference %+v", body, got, want)
	}
}

func FuzzDecodeBeat(f *testing.F) {
	for _, s := range []string{
		`{"Component":"x0c0s0b0n0","Hostname":"h","NID":"1","Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"}`,
		`{"component":"X01C0S0B0N0","status":"OK","timestamp":"2026-11-21 12:00:00","NID":5}`,
		`{"Component":"x0c0s0b0n0","Component":"x1c0s0b0n0","Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"}`,
		`{"Component":"x0c0s0b0n0","Status":"\u004fK","TimeStamp":"2026-11-21T12:00:00Z","x":[1]}`,
		`{"Component":null,"Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"}`,
		`{"Status":1}`, `[]`, `{`, ` {} `, `{"NID":-0.5e3}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecodeAgrees)
}

func TestDecodeAgreesOnSeeds(t *testing.T) {
	for _, s := range []string{
		`{"Component":"x0c0s0b0n0","Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"}  `,
		`{"Component":"x0c0s0b0n0","Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"} {}`,
		`{"Component":"x0c0s0b0n0","Status":"OK","TimeStamp":"2026-11-21T12:00:00Z","NID":01}`,
		`{"Component":"x0c0s0b0n0","Status":"OK","TimeStamp":"2026-11-21T12:00:00Z","NID":tru}`,
		`{"Component":"x0c0s0b0n0","Status":"OK","TimeStamp":"2026-11-21T12:00:00Z",}`,
		`{"Component":"x0c0s0b0n0","Status":"O` + "\x01" + `K","TimeStamp":"2026-11-21T12:00:00Z"}`,
	} {
		checkDecodeAgrees(t, []byte(s))
	}
}

func FuzzDecodeBatch(f *testing.F) {
	f.Add([]byte(`[{"Component":"x0c0s0b0n0","Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"},{"Component":"x0c0s0b0n1","Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"}]`))
	f.Add([]byte(`[ ]`))
	f.Add([]byte(`[{"Component":"x0c0s0b0n0"},]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := decodeBatch(body, nil)
		var wbs []wireBeat
		if httpserver.DecodeJSON(body, &wbs) != nil {
			if err == nil {
				t.Fatalf("%q: invalid JSON accepted", body)
			}
			return
		}
		var want []beat
		var werr error
		for i := range wbs {
			rb := wbs[i].raw()
			b, e := rb.validate("", "")
			if e != nil {
				werr, want = e, nil
				break
			}
			want = append(want, b)
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: fast error %v, reference error %v", body, err, werr)
		}
		if err == nil {
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(beat{}), cmpEmptyBeats); diff != "" {
				t.Fatalf("%q: (-reference +fast):\n%s", body, diff)
			}
		}
	})
}

var cmpEmptyBeats = cmp.Transformer("nonil", func(b []beat) []beat {
	if b == nil {
		return []beat{}
	}
	return b
})

func FuzzParseTimeStamp(f *testing.F) {
	for _, s := range []string{"2026-11-21T12:00:00Z", "2018-07-06T12:34:56.012345-5Z", "2026-11-21 12:00:00", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := parseTimeStamp(s)
		if err != nil {
			return
		}
		back, err := parseTimeStamp(ts.Format(time.RFC3339Nano))
		if err != nil || !back.Equal(ts) {
			t.Fatalf("%q parsed as %v, which does not round-trip: %v", s, ts, err)
		}
	})
}
