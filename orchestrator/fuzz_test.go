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

// FuzzAnsibleOutput: any standard output of a configuration command reads
// as a per-host report or as none, and a host that fails is always told
// why; never a panic.
func FuzzAnsibleOutput(f *testing.F) {
	for _, s := range []string{`{"plays":[],"stats":{"x1c0s0b0n0":{"ok":1,"failures":0}}}`,
		"[WARNING]: x\n{\"stats\":{\"h\":{\"unreachable\":1}},\"plays\":[{\"tasks\":[{\"task\":{\"name\":\"t\"},\"hosts\":{\"h\":{\"unreachable\":true,\"msg\":[1]}}}]}]}",
		`{"stats":null}`, `{`, "PLAY RECAP ***\nh : ok=1 failed=1\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		hosts, _ := parseAnsibleJSON([]byte(out))
		for h, r := range hosts {
			if !r.ok && r.why == "" {
				t.Errorf("host %q failed without why", h)
			}
		}
		rc := &recap{hosts: map[string]hostResult{}}
		_, _ = rc.Write([]byte(out + "\n"))
		_ = matchHosts([]string{"x1c0s0b0n0"}, rc.hosts, map[string]string{"nid000001": "x1c0s0b0n0"})
	})
}
