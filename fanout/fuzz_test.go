package fanout

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/xname"
)

func FuzzDecodeSCN(f *testing.F) {
	for _, s := range []string{
		`{"Components":["x1c0s0b0n0"],"State":"On","Seq":3,"Timestamp":"2026-01-02T03:04:05.123Z"}`,
		`{"Components":["x1c0s0b0n0","x1c0s0b0n1"],"Enabled":false,"Role":"Compute","SubRole":"Worker"}`,
		`{"Components":[]}`, `{"Components":["bogus"]}`, `[]`, `{"Components":["x0"],"NID":5}{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		scn, err := DecodeSCN(b)
		if err != nil {
			return
		}
		if len(scn.Components) == 0 {
			t.Fatal("accepted an SCN without components")
		}
		for _, c := range scn.Components {
			if !xname.Valid(c) || xname.Normalize(c) != c {
				t.Fatalf("accepted component %q that is not a normalised xname", c)
			}
		}
		// What hmnfd queues must decode to the same SCN.
		out, err := json.Marshal(scn)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeSCN(out)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", out, err)
		}
		if again.Seq != scn.Seq || strings.Join(again.Components, ",") != strings.Join(scn.Components, ",") {
			t.Fatalf("round trip changed the SCN: %+v -> %+v", scn, again)
		}
	})
}

func FuzzSubscription(f *testing.F) {
	f.Add("handler@x1c0s0b0n0", `{"Components":["allnodes","x1c0s0b0"],"States":["on"],"Url":"http://h:1/x"}`)
	f.Add("x0", `{"Enabled":true,"Roles":["Compute"],"Url":"https://h/x"}`)
	f.Add("@", `{"States":["Sleeping"],"Url":"ftp://h"}`)
	f.Fuzz(func(t *testing.T, subscriber, body string) {
		k, err := ParseSubscriber(subscriber)
		if err == nil && !xname.Valid(k.Component) {
			t.Fatalf("ParseSubscriber(%q) accepted component %q", subscriber, k.Component)
		}
		var sub Subscription
		if json.Unmarshal([]byte(body), &sub) != nil || sub.validate() != nil {
			return
		}
		// A valid subscription is a fixed point of validation and indexes cleanly.
		again := sub
		again.Components = append([]string(nil), sub.Components...)
		if err := again.validate(); err != nil || subBody(again) != subBody(sub) {
			t.Fatalf("validation not idempotent: %v\n%s\n%s", err, subBody(sub), subBody(again))
		}
		ix := newIndex()
		ix.put(1, k, sub)
		ix.remove(1)
		if len(ix.byComp)+ix.enabled.len()+len(ix.enabled.at)+len(ix.urls) != 0 {
			t.Fatal("index not empty after remove")
		}
		for _, m := range ix.attrs {
			if len(m) != 0 {
				t.Fatal("attribute index not empty after remove")
			}
		}
	})
}
