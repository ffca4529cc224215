package layout

import (
	"strings"
	"testing"
)

func TestRedactedExtraPropertiesAreBlankInAnswersNotInStore(t *testing.T) {
	e := newTestEnv(t)
	e.store.SetRedactedProperties([]string{"Password", "SNMPAuthPassword"})
	if code, body := e.do("PUT", "/v1/hardware/x3000c0w14", `{"Class":"River","ExtraProperties":{"Brand":"Dell","Password":"s3cret","SNMPAuthPassword":"s3cret2"}}`); code != 201 {
		t.Fatalf("put: %d %s", code, body)
	}
	for _, path := range []string{"/v1/hardware/x3000c0w14", "/v1/hardware", "/v1/search/hardware?class=River", "/v1/dumpstate"} {
		code, body := e.do("GET", path, "")
		if code != 200 {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		if strings.Contains(body, "s3cret") || !strings.Contains(body, `"Password":""`) ||
			!strings.Contains(body, `"SNMPAuthPassword":""`) || !strings.Contains(body, `"Brand":"Dell"`) {
			t.Errorf("GET %s not redacted: %s", path, body)
		}
	}
	h, ok := e.store.GetHardware("x3000c0w14")
	if !ok || !strings.Contains(string(h.ExtraProperties), `"Password":"s3cret"`) {
		t.Fatalf("stored object changed: %s", h.ExtraProperties)
	}
}

func TestExtraPropertiesUnredactedByDefault(t *testing.T) {
	e := newTestEnv(t)
	e.do("PUT", "/v1/hardware/x3000c0w14", `{"Class":"River","ExtraProperties":{"Password":"s3cret"}}`)
	if _, body := e.do("GET", "/v1/hardware/x3000c0w14", ""); !strings.Contains(body, `"Password":"s3cret"`) {
		t.Fatalf("default must return the stored password as HMS does: %s", body)
	}
}
