package token

import "testing"

func TestHostsAllow(t *testing.T) {
	h := Hosts{"bss.mgmt", "10.1.0.5"}
	for _, tc := range []struct {
		url  string
		want bool
	}{
		{url: "http://127.0.0.1:27778/boot/v1/scn", want: true},
		{url: "http://127.9.9.9/x", want: true},
		{url: "http://[::1]:28600/hmi/v1/scn", want: true},
		{url: "http://localhost/x", want: true},
		{url: "http://BSS.mgmt:27778/boot/v1/scn", want: true},
		{url: "https://10.1.0.5/x", want: true},
		{url: "http://10.1.0.50:8080/node-listener", want: false},
		{url: "http://attacker.example/", want: false},
		{url: "http://bss.mgmt.attacker.example/", want: false},
		{url: "::not a url", want: false},
	} {
		if got := h.AllowsURL(tc.url); got != tc.want {
			t.Errorf("AllowsURL(%q) = %v, want %v", tc.url, got, tc.want)
		}
	}
	if !h.AllowsAddr("10.1.0.5:80") || h.AllowsAddr("10.1.0.6:80") || h.AllowsAddr("nonsense") {
		t.Error("AllowsAddr disagrees with AllowsURL")
	}
	if (Hosts{}).AllowsURL("http://10.1.0.5/") {
		t.Error("an empty list allows only loopback")
	}
}
