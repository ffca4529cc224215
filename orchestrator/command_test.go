package orchestrator

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestConfigCommand: with -config-command, booted nodes are configuring
// until the command has run over their batch (once for both nodes, with
// the configuration and the xnames): exit 0 makes them stable; a failing
// run fails them with its exit status and output; a run past the timeout
// is killed and fails them; an Ansible PLAY RECAP decides per node.
func TestConfigCommand(t *testing.T) {
	script, err := filepath.Abs("testdata/configure.sh")
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "runs")
	// Runs time out when the test closes timeout; the runs after get a
	// fresh one.
	var mu sync.Mutex
	timeout := make(chan time.Time)
	e := newEnvWith(t, func(cfg *DaemonConfig) {
		cfg.CFSURL = ""
		cfg.Command = &CommandConfig{Command: "sh " + quote(script) + " " + quote(logFile) + " {config} {nodes}", Timeout: time.Minute}
		cfg.After = func(time.Duration) <-chan time.Time { mu.Lock(); defer mu.Unlock(); return timeout }
	}, n1, n2)
	svc := e.daemon.svc
	e.configTemplates("good", "bad", "hang", "recap")

	e.session(`{"name":"s1","operation":"boot","template_name":"good"}`)
	e.reconcile()
	e.wantStatuses("powered on", StatusPowerOnCalled, StatusPowerOnCalled)
	e.clock.Advance(20 * time.Second)
	e.reconcile()
	e.wantStatuses("booted, configuring", StatusConfiguring, StatusConfiguring)
	svc.cmd.wait()
	e.reconcile()
	e.wantStatuses("configured", StatusStable, StatusStable)
	runs, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	both := n1 + "," + n2
	if d := cmp.Diff("good "+both+" good "+both+"\n", string(runs)); d != "" {
		t.Errorf("runs (-want +got):\n%s", d)
	}

	e.session(`{"name":"s2","operation":"boot","template_name":"bad"}`)
	e.reconcile()
	e.wantStatuses("booted already, configuring", StatusConfiguring, StatusConfiguring)
	svc.cmd.wait()
	e.reconcile()
	e.wantStatuses("configuration failed", StatusFailed, StatusFailed)
	want := "configuration command for bad: exit status 2: fatal: [" + both + "]: UNREACHABLE!"
	if c := e.component(n1); c.Enabled || c.Error != want {
		t.Errorf("n1 after a failed run: enabled %v, error %q, want %q", c.Enabled, c.Error, want)
	}

	e.session(`{"name":"s3","operation":"boot","template_name":"hang"}`)
	e.reconcile()
	e.wantStatuses("hanging", StatusConfiguring, StatusConfiguring)
	mu.Lock()
	close(timeout)
	mu.Unlock()
	svc.cmd.wait()
	mu.Lock()
	timeout = make(chan time.Time)
	mu.Unlock()
	e.reconcile()
	e.wantStatuses("timed out", StatusFailed, StatusFailed)
	if c := e.component(n2); !strings.HasPrefix(c.Error, "configuration command for hang: timed out after 1m0s") {
		t.Errorf("n2 after a run past its timeout: error %q", c.Error)
	}
	if s := e.sessionState("s3"); s.Status.Status != SessionComplete {
		t.Errorf("session s3: %+v", s.Status)
	}

	e.session(`{"name":"s4","operation":"boot","template_name":"recap"}`)
	e.reconcile()
	svc.cmd.wait()
	e.reconcile()
	e.wantStatuses("per host from the PLAY RECAP", StatusStable, StatusFailed)
	if c := e.component(n2); !strings.HasPrefix(c.Error, "configuration command for recap: exit status 4: PLAY RECAP") {
		t.Errorf("n2, unreachable in the recap: error %q", c.Error)
	}
}

// configTemplates PUTs a template per configuration, named after it, that
// boots n1 and n2 and configures them with it.
func (e *env) configTemplates(configs ...string) {
	e.t.Helper()
	for _, config := range configs {
		body := `{"cfs":{"configuration":"` + config + `"},"boot_sets":{"c":{"path":"` + e.cluster.manifestURL("img1") +
			`","type":"s3","node_list":["` + n1 + `","` + n2 + `"]}}}`
		if code := e.call("PUT", "/v2/sessiontemplates/"+config, body, nil); code != 200 {
			e.t.Fatal(code)
		}
	}
}

// TestConfigCommandAnsibleJSON: ansible-playbook with the json callback
// (recorded documents played back by testdata/ansible/play.sh) decides per
// node: a host that went through is stable (a failure it ignored aside),
// whatever the exit status; a failed or unreachable one fails naming the
// task and its message. Hosts are matched by xname, by a domain name whose
// first label is the xname, and by the nid hostname of HSM's NID.
func TestConfigCommandAnsibleJSON(t *testing.T) {
	dir, err := filepath.Abs("testdata/ansible")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, func(cfg *DaemonConfig) {
		cfg.CFSURL = ""
		cfg.Command = &CommandConfig{Command: "sh " + quote(filepath.Join(dir, "play.sh")) + " " + quote(dir) + " {config}"}
	}, n1, n2)
	e.cluster.set(n2, func(n *simNode) { n.comp.NID = new(2) })
	e.configTemplates("failed", "unreachable")
	tests := []struct {
		config string
		want   []string
		err    string
	}{
		{config: "failed", want: []string{StatusStable, StatusFailed},
			err: "configuration command for failed: x3000c0s2b0n0 failed at task \"Start slurmd\": Unable to start service slurmd: " +
				"Job for slurmd.service failed because the control process exited with error code.\n" +
				"See \"systemctl status slurmd.service\" and \"journalctl -xeu slurmd.service\" for details."},
		{config: "unreachable", want: []string{StatusStable, StatusFailed},
			err: "configuration command for unreachable: nid000002 unreachable at task \"Gathering Facts\": " +
				"Failed to connect to the host via ssh: ssh: connect to host nid000002 port 22: No route to host"},
	}
	for i, tt := range tests {
		t.Run(tt.config, func(t *testing.T) {
			e.session(`{"name":"s` + strconv.Itoa(i) + `","operation":"boot","template_name":"` + tt.config + `"}`)
			for range 3 { // power on, boot and configure, take the result
				e.reconcile()
				e.daemon.svc.cmd.wait()
				e.clock.Advance(20 * time.Second)
			}
			e.wantStatuses(tt.config, tt.want...)
			if c := e.component(n2); c.Error != tt.err {
				t.Errorf("n2 error\n%q\nwant\n%q", c.Error, tt.err)
			}
		})
	}
}

func TestTail(t *testing.T) {
	tl := &tail{max: 4}
	for _, s := range []string{"ab", "cdef", "g"} {
		if _, err := tl.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if got := tl.String(); got != "...defg" {
		t.Errorf("tail %q, want ...defg", got)
	}
}

// TestConfigCommandRefusesUnsafeNames: a configuration name or xname that
// would need quoting never reaches the shell, quoted or not; the nodes
// fail with why.
func TestConfigCommandRefusesUnsafeNames(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	store, err := OpenStore(t.Context(), filepath.Join(t.TempDir(), "bos.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	r := newCommandRunner(CommandConfig{Command: "touch " + quote(marker) + `; echo "config={config}"`}, store,
		func(time.Duration) <-chan time.Time { return nil }, func() {}, slog.New(slog.DiscardHandler))
	for _, config := range []string{"$(id)", "a b", `x"y`} {
		if err := r.start(t.Context(), []string{"x1000c0s0b0n0"}, config, 1, nil); err != nil {
			t.Fatal(err)
		}
		r.wait()
		got, _ := r.CFSComponents(t.Context(), []string{"x1000c0s0b0n0"})
		if len(got) != 1 || got[0].ConfigurationStatus != CFSFailed || !strings.Contains(got[0].Error, "not run") {
			t.Errorf("configuration %q: %+v, want failed, not run", config, got)
		}
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the command ran for an unsafe name (%v)", err)
	}
}

// TestParseAnsibleJSON: the json callback's document, read from a run's
// standard output, gives each host's outcome; output that holds no such
// document gives none (the exit status decides).
func TestParseAnsibleJSON(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata/ansible", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name, out string
		want      map[string]hostResult
		ok        bool
	}{
		{name: "failed task", out: read("failed.json"), ok: true, want: map[string]hostResult{
			"x3000c0s1b0n0": {ok: true},
			"x3000c0s2b0n0": {why: `x3000c0s2b0n0 failed at task "Start slurmd": Unable to start service slurmd: Job for slurmd.service ` +
				"failed because the control process exited with error code.\nSee \"systemctl status slurmd.service\" and " +
				"\"journalctl -xeu slurmd.service\" for details."}}},
		{name: "after a warning line", out: "[WARNING]: provided hosts list is empty\n" + read("unreachable.json"), ok: true,
			want: map[string]hostResult{"x3000c0s1b0n0.hmn": {ok: true},
				"nid000002": {why: `nid000002 unreachable at task "Gathering Facts": Failed to connect to the host via ssh: ` +
					"ssh: connect to host nid000002 port 22: No route to host"}}},
		{name: "failed with no task named", out: `{"plays":[],"stats":{"h1":{"failures":2,"unreachable":0}}}`, ok: true,
			want: map[string]hostResult{"h1": {why: "h1: failures=2 unreachable=0"}}},
		{name: "default callback", out: "PLAY [all] ***\n\nPLAY RECAP ***\nh1 : ok=1 failed=0\n"},
		{name: "JSON without stats", out: `{"plays":[]}`},
		{name: "cut short", out: read("failed.json")[:500]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseAnsibleJSON([]byte(tt.out))
			if ok != tt.ok {
				t.Fatalf("read %v, want %v", ok, tt.ok)
			}
			if d := cmp.Diff(tt.want, got, cmp.AllowUnexported(hostResult{})); d != "" {
				t.Errorf("hosts (-want +got):\n%s", d)
			}
		})
	}
}

// TestMatchHosts: Ansible's hosts are the batch's nodes by xname (any
// case, or as a domain name's first label) or by hostname; other hosts
// are left out; a node named twice fails if either failed.
func TestMatchHosts(t *testing.T) {
	bad := hostResult{why: "failed"}
	good := hostResult{ok: true}
	tests := []struct {
		name  string
		ids   []string
		hosts map[string]hostResult
		want  map[string]hostResult
	}{
		{name: "xnames and names", ids: []string{n1, n2, "x3000c0s3b0n0"},
			hosts: map[string]hostResult{strings.ToUpper(n1): good, "nid000002.local": bad, "other": bad},
			want:  map[string]hostResult{n1: good, n2: bad}},
		{name: "named twice", ids: []string{n1, n2}, hosts: map[string]hostResult{n2: good, "nid000002": bad, n1 + ".hmn": good},
			want: map[string]hostResult{n1: good, n2: bad}},
		{name: "one node, one host", ids: []string{n1}, hosts: map[string]hostResult{"compute-1": bad},
			want: map[string]hostResult{n1: bad}},
		{name: "one node, the control node", ids: []string{n1}, hosts: map[string]hostResult{"localhost": bad},
			want: map[string]hostResult{}},
		{name: "alias of a node not in the batch", ids: []string{n1, "x3000c0s3b0n0"}, hosts: map[string]hostResult{"nid000002": bad},
			want: map[string]hostResult{}},
		{name: "no report", ids: []string{n1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := matchHosts(tt.ids, tt.hosts, map[string]string{"nid000002": n2})
			if d := cmp.Diff(tt.want, got, cmp.AllowUnexported(hostResult{})); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestJSONReport: the json callback's document is decoded as it is
// written, in pieces of any size, after blank lines and warnings; output
// whose first other line is not the document is not read further (it was
// kept up to 64 MiB and searched), and a document past the cap is given up.
func TestJSONReport(t *testing.T) {
	doc, err := os.ReadFile("testdata/ansible/failed.json")
	if err != nil {
		t.Fatal(err)
	}
	want, ok := parseAnsibleJSON(doc)
	if !ok || len(want) != 2 {
		t.Fatalf("failed.json reads as %v, %v", want, ok)
	}
	write := func(j *jsonReport, out []byte, piece int) {
		for len(out) > 0 {
			n := min(piece, len(out))
			if _, err := j.Write(out[:n]); err != nil {
				t.Fatal(err)
			}
			out = out[n:]
		}
	}
	for _, piece := range []int{1, 7, 4096} {
		j := newJSONReport(jsonMax)
		write(j, append([]byte("\n[DEPRECATION WARNING]: old\n  \n[WARNING]: provided hosts list is empty\n"), doc...), piece)
		got, ok := j.result()
		if d := cmp.Diff(want, got, cmp.AllowUnexported(hostResult{})); !ok || d != "" {
			t.Errorf("in pieces of %d: read %v (-want +got):\n%s", piece, ok, d)
		}
	}

	j := newJSONReport(jsonMax)
	write(j, []byte("PLAY [all] ***\n"), 3)
	if j.state != jsonOff || j.head != nil {
		t.Fatalf("after a line that is no warning: state %d, head %q; want off, nothing kept", j.state, j.head)
	}
	write(j, doc, 4096)
	if _, ok := j.result(); ok || j.done != nil {
		t.Errorf("a document after other output was read (%v)", ok)
	}

	j = newJSONReport(len(doc) - 1)
	write(j, doc, 4096)
	if _, ok := j.result(); ok {
		t.Error("a document past the cap was read")
	}
}
