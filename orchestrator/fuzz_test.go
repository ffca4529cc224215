package orchestrator

import "testing"

// FuzzTemplateBody: any template body is refused with an error or accepted
// as a template that checks; never a panic.
func FuzzTemplateBody(f *testing.F) {
	for _, s := range []string{`{"boot_sets":{"b":{"path":"p","type":"s3","node_list":["x1c0s0b0n0"]}}}`,
		`{"boot_sets":{}}`, `{"boot_sets":{"b":{"name":"c"}}}`, `[]`, `{"enable_cfs":null}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var tmpl Template
		if err := decodeStrict([]byte(body), &tmpl); err != nil {
			return
		}
		tmpl.Name = "t"
		_ = checkTemplate(&tmpl, true)
	})
}

// FuzzParseAge: ages of any shape parse to a non-negative duration.
func FuzzParseAge(f *testing.F) {
	for _, s := range []string{"3d", "0", "6h", "2w", "", "x", "-1d", "99999999999999999999m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d := parseAge(s); d < 0 && stringPatterns["cleanup_completed_session_ttl"].MatchString(s) {
			t.Errorf("parseAge(%q) = %v", s, d)
		}
	})
}

// FuzzMergePatch: a patch of any shape merges into a component or is
// refused; never a panic.
func FuzzMergePatch(f *testing.F) {
	for _, s := range []string{`{"status":{"phase":"powering_on"}}`, `{"enabled":true}`, `null`, `{"x":1}`, `{"status":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, patch string) {
		var out Component
		_ = mergePatch(newComponent("x1c0s0b0n0"), []byte(patch), &out)
	})
}
