package orchestrator

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// The json callback (ANSIBLE_STDOUT_CALLBACK=json, or ansible.posix.json)
// prints one document on standard output: per play its tasks, each with
// its result per host, then the stats per host. It is decoded as it is
// written (jsonReport), keeping only the stats and the results of failed
// or unreachable hosts: a batch of many nodes prints a result per host and
// task, tens of MiB that were kept whole and decoded again.

// ansibleStats is one host's line of the document's stats.
type ansibleStats struct {
	Unreachable int `json:"unreachable"`
	Failures    int `json:"failures"`
}

// ansibleTask is one task of a play, with its result per host.
type ansibleTask struct {
	Task struct {
		Name string `json:"name"`
	} `json:"task"`
	Hosts map[string]struct {
		Failed      bool            `json:"failed"`
		Unreachable bool            `json:"unreachable"`
		Msg         json.RawMessage `json:"msg"`
	} `json:"hosts"`
}

// parseAnsibleJSON reads the json callback's document from a run's whole
// standard output (jsonReport reads it as it is written).
func parseAnsibleJSON(out []byte) (map[string]hostResult, bool) {
	j := newJSONReport(len(out) + 1)
	_, _ = j.Write(out)
	return j.result()
}

// decodeAnsibleJSON decodes the document token by token, one task's
// results at a time: per host, configured when it has no failures and was
// reachable, else failed naming the last task that failed it. It reports
// false when r holds no such document.
func decodeAnsibleJSON(r io.Reader) (map[string]hostResult, bool) {
	dec := json.NewDecoder(r)
	if !delim(dec, '{') {
		return nil, false
	}
	var stats map[string]ansibleStats
	failed := map[string]string{} // host -> the last task that failed it
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, false
		}
		switch key {
		case "stats":
			err = dec.Decode(&stats)
		case "plays":
			err = decodePlays(dec, failed)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return nil, false
		}
	}
	if !delim(dec, '}') || stats == nil {
		return nil, false
	}
	hosts := make(map[string]hostResult, len(stats))
	for host, st := range stats {
		switch why, ok := failed[host]; {
		case st.Failures == 0 && st.Unreachable == 0:
			hosts[host] = hostResult{ok: true}
		case ok:
			hosts[host] = hostResult{why: why}
		default:
			hosts[host] = hostResult{why: fmt.Sprintf("%s: failures=%d unreachable=%d", host, st.Failures, st.Unreachable)}
		}
	}
	return hosts, true
}

// decodePlays reads the plays array, noting in failed, per host, the last
// task that failed it (the one that stopped it: one whose failure was
// ignored or rescued comes before).
func decodePlays(dec *json.Decoder, failed map[string]string) error {
	errBad := errors.New("not the json callback's plays")
	if !delim(dec, '[') {
		return errBad
	}
	for dec.More() {
		if !delim(dec, '{') {
			return errBad
		}
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return err
			}
			if key != "tasks" {
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					return err
				}
				continue
			}
			if !delim(dec, '[') {
				return errBad
			}
			for dec.More() {
				var t ansibleTask
				if err := dec.Decode(&t); err != nil {
					return err
				}
				noteFailed(t, failed)
			}
			if !delim(dec, ']') {
				return errBad
			}
		}
		if !delim(dec, '}') {
			return errBad
		}
	}
	if !delim(dec, ']') {
		return errBad
	}
	return nil
}

// noteFailed records the hosts t failed or found unreachable.
func noteFailed(t ansibleTask, failed map[string]string) {
	for host, r := range t.Hosts {
		if !r.Failed && !r.Unreachable {
			continue
		}
		what := "failed"
		if r.Unreachable {
			what = "unreachable"
		}
		why := fmt.Sprintf("%s %s at task %q", host, what, t.Task.Name)
		var m any
		if json.Unmarshal(r.Msg, &m) == nil {
			if s := message(m); s != "" {
				why += ": " + s
			}
		}
		failed[host] = why
	}
}

// delim reads the next token and reports whether it is d.
func delim(dec *json.Decoder, d json.Delim) bool {
	t, err := dec.Token()
	return err == nil && t == d
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

// jsonReport reads the json callback's document from a run's standard
// output as it is written. Blank lines and Ansible's warnings before it
// are skipped; any other line before it means the output is not the json
// callback's, and nothing more is read. The document is fed to a decoder
// as it arrives (decodeAnsibleJSON); past max bytes it is given up (the
// PLAY RECAP and the exit status decide).
type jsonReport struct {
	mu    sync.Mutex
	max   int
	state int
	head  []byte // the start of the current line, before the document
	n     int    // bytes of the document so far
	pw    *io.PipeWriter
	done  chan struct{}
	hosts map[string]hostResult
	ok    bool
}

// jsonReport states.
const (
	jsonLooking   = iota // at the start of a line, before the document
	jsonHead             // reading a line's head, to tell a warning
	jsonWarning          // skipping a warning line
	jsonStreaming        // feeding the document to the decoder
	jsonOff              // not the json callback, or too large
)

func newJSONReport(max int) *jsonReport { return &jsonReport{max: max} }

func (j *jsonReport) Write(p []byte) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := 0; i < len(p) && j.state < jsonStreaming; i++ {
		c := p[i]
		switch {
		case j.state == jsonWarning:
			if c == '\n' {
				j.state = jsonLooking
			}
		case j.state == jsonLooking && c == '{':
			j.start()
			j.feed(p[i:])
			return len(p), nil
		case j.state == jsonLooking && (c == ' ' || c == '\t' || c == '\r' || c == '\n'):
		default:
			j.state = jsonHead
			j.head = append(j.head, c)
			j.judge(c == '\n')
		}
	}
	if j.state == jsonStreaming {
		j.feed(p)
	}
	return len(p), nil
}

// judge decides, from the head of a line before the document, whether it
// is a warning (skipped) or anything else (the output is not the json
// callback's).
func (j *jsonReport) judge(eol bool) {
	const longest = len("[DEPRECATION WARNING]")
	line := string(j.head)
	for _, w := range []string{"[WARNING]", "[DEPRECATION WARNING]"} {
		if strings.HasPrefix(line, w) {
			j.state, j.head = jsonWarning, j.head[:0]
			if eol {
				j.state = jsonLooking
			}
			return
		}
	}
	if eol || len(j.head) >= longest {
		j.state, j.head = jsonOff, nil
	}
}

// start begins decoding the document.
func (j *jsonReport) start() {
	pr, pw := io.Pipe()
	j.state, j.pw, j.done = jsonStreaming, pw, make(chan struct{})
	go func() {
		defer close(j.done)
		hosts, ok := decodeAnsibleJSON(pr)
		// The decoder stops at the document's end or at what it cannot
		// read: later writes are not waited for.
		pr.CloseWithError(io.ErrClosedPipe)
		j.hosts, j.ok = hosts, ok
	}()
}

// feed hands p to the decoder, giving up past max bytes.
func (j *jsonReport) feed(p []byte) {
	if j.n += len(p); j.n > j.max {
		j.pw.CloseWithError(errors.New("json callback output too large"))
		j.state = jsonOff
		return
	}
	if _, err := j.pw.Write(p); err != nil {
		j.state = jsonOff // the decoder is done
	}
}

// result ends the document and returns what the decoder read (false if
// it read no report).
func (j *jsonReport) result() (map[string]hostResult, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.done == nil {
		return nil, false
	}
	j.pw.Close()
	<-j.done
	if j.n > j.max {
		return nil, false
	}
	return j.hosts, j.ok
}
