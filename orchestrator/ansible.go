package orchestrator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// hostResult is one host's outcome as ansible-playbook reports it.
type hostResult struct {
	ok bool
	// why says what failed a host, when its output tells: the task and
	// its message.
	why string
}

// recap reads Ansible's PLAY RECAP: after a line starting "PLAY RECAP",
// lines "HOST : ok=3 changed=1 unreachable=0 failed=0 ...".
type recap struct {
	mu    sync.Mutex
	line  []byte
	in    bool
	hosts map[string]hostResult
}

func (p *recap) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range b {
		switch {
		case c == '\n':
			p.parse(string(p.line))
			p.line = p.line[:0]
		case len(p.line) < 4096:
			p.line = append(p.line, c)
		}
	}
	return len(b), nil
}

func (p *recap) parse(line string) {
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "PLAY RECAP") {
		p.in = true
		return
	}
	host, counts, found := strings.Cut(line, ":")
	host = strings.TrimSpace(host)
	if !p.in || !found || host == "" || strings.ContainsAny(host, " \t") {
		return
	}
	ok, seen := true, false
	for _, f := range strings.Fields(counts) {
		k, v, _ := strings.Cut(f, "=")
		if k == "failed" || k == "unreachable" {
			seen = true
			ok = ok && v == "0"
		}
	}
	if seen {
		p.hosts[host] = hostResult{ok: ok}
	}
}

// ansibleJSON is the document ansible-playbook prints on its standard
// output with the json callback (ANSIBLE_STDOUT_CALLBACK=json, or
// ansible.posix.json): per play its tasks, each with its result per host,
// then the stats per host. Only what bos reads is declared.
type ansibleJSON struct {
	Plays []struct {
		Tasks []struct {
			Task struct {
				Name string `json:"name"`
			} `json:"task"`
			Hosts map[string]struct {
				Failed      bool `json:"failed"`
				Unreachable bool `json:"unreachable"`
				Msg         any  `json:"msg"`
			} `json:"hosts"`
		} `json:"tasks"`
	} `json:"plays"`
	Stats map[string]struct {
		Ok          int `json:"ok"`
		Changed     int `json:"changed"`
		Unreachable int `json:"unreachable"`
		Failures    int `json:"failures"`
		Skipped     int `json:"skipped"`
		Rescued     int `json:"rescued"`
		Ignored     int `json:"ignored"`
	} `json:"stats"`
}

// parseAnsibleJSON reads the json callback's document from a run's
// standard output (lines before the one that opens it, such as a warning
// printed there, are skipped): per host, configured when it has no
// failures and was reachable, else failed naming the last task that
// failed it. It reports false when out holds no such document.
func parseAnsibleJSON(out []byte) (map[string]hostResult, bool) {
	start := 0
	if !bytes.HasPrefix(out, []byte("{")) {
		i := bytes.Index(out, []byte("\n{"))
		if i < 0 {
			return nil, false
		}
		start = i + 1
	}
	var doc ansibleJSON
	if err := json.NewDecoder(bytes.NewReader(out[start:])).Decode(&doc); err != nil || doc.Stats == nil {
		return nil, false
	}
	hosts := make(map[string]hostResult, len(doc.Stats))
	for host, st := range doc.Stats {
		if st.Failures == 0 && st.Unreachable == 0 {
			hosts[host] = hostResult{ok: true}
			continue
		}
		why := fmt.Sprintf("%s: failures=%d unreachable=%d", host, st.Failures, st.Unreachable)
		// The last task that failed the host is the one that stopped it
		// (one whose failure was ignored or rescued comes before).
		for _, p := range doc.Plays {
			for _, t := range p.Tasks {
				r, ok := t.Hosts[host]
				if !ok || (!r.Failed && !r.Unreachable) {
					continue
				}
				what := "failed"
				if r.Unreachable {
					what = "unreachable"
				}
				why = fmt.Sprintf("%s %s at task %q", host, what, t.Task.Name)
				if m := message(r.Msg); m != "" {
					why += ": " + m
				}
			}
		}
		hosts[host] = hostResult{why: why}
	}
	return hosts, true
}

// message is a task result's msg: a string, or anything else as JSON.
func message(m any) string {
	switch v := m.(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(v)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// matchHosts gives the batch's nodes the results of the hosts Ansible
// named: a host is a node when it is the node's xname or hostname
// (aliases: lower-case hostname -> xname, such as nid000001), either
// alone or as the first label of a domain name, in any case; a batch of
// one node takes the result of the only host named (but for a play on
// localhost, the control node). A node named twice
// fails if either failed.
func matchHosts(ids []string, hosts map[string]hostResult, aliases map[string]string) map[string]hostResult {
	if len(hosts) == 0 {
		return nil
	}
	byName := make(map[string]string, len(ids))
	for _, id := range ids {
		byName[strings.ToLower(id)] = id
	}
	node := func(host string) (string, bool) {
		h := strings.ToLower(host)
		for _, name := range []string{h, strings.SplitN(h, ".", 2)[0]} {
			if id, ok := byName[name]; ok {
				return id, true
			}
			if id, ok := aliases[name]; ok && byName[strings.ToLower(id)] != "" {
				return byName[strings.ToLower(id)], true
			}
		}
		return "", false
	}
	out := map[string]hostResult{}
	for host, r := range hosts {
		id, ok := node(host)
		if !ok && len(ids) == 1 && len(hosts) == 1 && host != "localhost" && host != "127.0.0.1" {
			id, ok = ids[0], true
		}
		if prev, seen := out[id]; ok && (!seen || prev.ok) {
			out[id] = r
		}
	}
	return out
}

// capped keeps what is written to it up to max bytes; past that it keeps
// nothing more and says so (over).
type capped struct {
	mu   sync.Mutex
	max  int
	b    []byte
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.over || len(c.b)+len(p) > c.max {
		c.over, c.b = true, nil
		return len(p), nil
	}
	c.b = append(c.b, p...)
	return len(p), nil
}

// bytes returns what was kept; nil once over.
func (c *capped) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b
}
