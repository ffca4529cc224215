package report

import "testing"

func TestParse(t *testing.T) {
	tests := []struct {
		name, cmdline, params, token string
	}{
		{name: "bss boot", cmdline: "initrd=initrd console=ttyS0 root=sbps:s3://b/r:e bos_session_id=s1 xname=x1c0s0b0n0 nid=3 bss_referral_token=abc ds=nocloud-net;s=http://bss/ hms_node_token=eyJ\n",
			params: "console=ttyS0 root=sbps:s3://b/r:e bos_session_id=s1", token: "abc"},
		{name: "no token", cmdline: "BOOT_IMAGE=/vmlinuz quiet", params: "BOOT_IMAGE=/vmlinuz quiet"},
		{name: "empty", cmdline: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, tok := Parse(tt.cmdline)
			if p != tt.params || tok != tt.token {
				t.Errorf("Parse = %q, %q; want %q, %q", p, tok, tt.params, tt.token)
			}
		})
	}
}
