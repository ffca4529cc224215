package integration

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hmsuite/hms/discovery"
	"github.com/hmsuite/hms/fanout"
	"github.com/hmsuite/hms/heartbeat"
	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/bus/bustest"
	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/ipxe"
	"github.com/hmsuite/hms/layout"
	"github.com/hmsuite/hms/nodes"
	"github.com/hmsuite/hms/statemgr"
)

// suiteDaemons are the daemons the workflows need, in start order (each
// one's peers start before it).
var suiteDaemons = []string{"sls", "hsm", "hbtd", "hmnfd", "bss", "reds"}

// A suite is the HMS daemons on fixed loopback ports, each started with the
// flags its binary takes: in this process (StartDaemon, as hms up does), or
// as the binaries built from cmd/*, which the test can kill -9 and restart
// on the same port and database. bss hands its DHCP lease events to reds
// through a Kafka broker (kfake) in the test process in both modes, so a
// reds killed mid-stream resumes at its consumer group's offset.
type suite struct {
	t   *testing.T
	dir string
	bin string // directory of the built binaries; "" runs in-process
	// daemons are those this suite runs, in start order (suiteDaemons
	// unless newSuiteOf chose others).
	daemons []string
	ports   map[string]int
	kafka   []string
	dhcp    int // bss's DHCP port on 127.0.0.1
	relay   int // the sim relay's port (bss -dhcp-relay-port)
	bmc     int // BMC HTTPS port
	snmp    int // the simulated switches' port
	// authArgs are the auth flags of every daemon (nil: auth off); admin
	// is the token the test's own calls send ("" when off).
	authArgs []string
	admin    string
	mu       sync.Mutex
	procs    map[string]*proc
	logs     map[string]*os.File
	stderr   io.Writer
}

// proc is one running daemon: stop ends it (SIGKILL for a binary, a
// cancelled context in-process); done is closed when it has exited.
type proc struct {
	stop func()
	done chan struct{}
	err  error
}

// newSuite picks the ports and starts every daemon; bin is the directory of
// the built binaries, or "" for in-process daemons.
func newSuite(t *testing.T, bin string) *suite { t.Helper(); return newSuiteWith(t, bin, false) }

// newSuiteWith is newSuite with every daemon checking tokens when enforce:
// site tokens from a test issuer (the daemons send each other an admin
// one), node tokens minted by bss with a key of the test's.
func newSuiteWith(t *testing.T, bin string, enforce bool) *suite {
	t.Helper()
	return startSuite(t, bin, enforce, suiteDaemons)
}

// newSuiteOf runs only the daemons named (in start order), in-process, tokens
// unchecked: e.g. sls, hsm, bss and nodes for `hms apply`.
func newSuiteOf(t *testing.T, daemons ...string) *suite {
	t.Helper()
	return startSuite(t, "", false, daemons)
}

func startSuite(t *testing.T, bin string, enforce bool, daemons []string) *suite {
	t.Helper()
	s := &suite{t: t, dir: t.TempDir(), bin: bin, daemons: daemons, ports: map[string]int{}, procs: map[string]*proc{},
		logs: map[string]*os.File{}, kafka: bustest.Kafka(t)}
	if enforce {
		s.enforce()
	}
	for _, n := range daemons {
		s.ports[n] = freePort(t, "tcp4")
	}
	s.dhcp, s.relay, s.snmp, s.bmc = freePort(t, "udp4"), freePort(t, "udp4"), freePort(t, "udp4"), freePort(t, "tcp4")
	conf := filepath.Join(s.dir, "dhcp.json")
	if err := os.WriteFile(conf, []byte(`{"subnets":[{"subnet":"127.20.0.0/16","range":"127.20.1.0-127.20.255.254","relayed":true},`+
		`{"subnet":"127.31.0.0/16","range":"127.31.1.0-127.31.255.254","relayed":true}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stopAll)
	for _, n := range daemons {
		s.start(n)
	}
	return s
}

// url is the base URL of daemon name.
func (s *suite) url(name string) string { return fmt.Sprintf("http://127.0.0.1:%d", s.ports[name]) }

// args are the flags daemon name runs with (the same in both modes).
func (s *suite) args(name string) []string {
	level := "warn"
	if name == "reds" {
		level = "info"
	}
	a := []string{"-listen", fmt.Sprintf("127.0.0.1:%d", s.ports[name]), "-db", filepath.Join(s.dir, name+".db"), "-log-level", level}
	a = append(a, s.authArgs...)
	switch name {
	case "hsm":
		a = append(a, "-sls-url", s.url("sls"), "-hbtd-url", s.url("hbtd"), "-cred-key-file", filepath.Join(s.dir, "hsm-cred.key"))
	case "hbtd":
		a = append(a, "-hsm-url", s.url("hsm"), "-warntime", "2", "-errtime", "3")
	case "hmnfd":
		a = append(a, "-hsm-url", s.url("hsm"), "-scn-in-url", s.url("hmnfd")+"/hmi/v1/scn")
	case "bss":
		a = append(a, "-hsm-url", s.url("hsm"), "-scn-in-url", s.url("bss")+"/boot/v1/scn",
			"-dhcp-listen", fmt.Sprintf("127.0.0.1:%d", s.dhcp), "-dhcp-relay-port", strconv.Itoa(s.relay),
			"-dhcp-config", filepath.Join(s.dir, "dhcp.json"), "-kafka-brokers", strings.Join(s.kafka, ","))
		if s.authArgs != nil {
			a = append(a, "-node-token-key", filepath.Join(s.dir, "node-token.key"))
		}
	case "reds":
		a = append(a, "-sls-url", s.url("sls"), "-hsm-url", s.url("hsm"), "-cred-key-file", filepath.Join(s.dir, "reds-cred.key"),
			"-bmc-port", strconv.Itoa(s.bmc), "-bmc-insecure", "-snmp-port", strconv.Itoa(s.snmp),
			"-sls-refresh", "1s", "-presence-interval", "1s", "-kafka-brokers", strings.Join(s.kafka, ","))
	case "nodes":
		a = append(a, "-sls-url", s.url("sls"), "-hsm-url", s.url("hsm"), "-bss-url", s.url("bss"),
			"-cred-key-file", filepath.Join(s.dir, "nodes-cred.key"))
	}
	return a
}

// start starts daemon name and waits until it answers HTTP.
func (s *suite) start(name string) {
	s.t.Helper()
	var p *proc
	var err error
	if s.bin != "" {
		p, err = s.startBinary(name)
	} else {
		p, err = startInProcess(name, s.args(name))
	}
	if err != nil {
		s.t.Fatalf("start %s: %v", name, err)
	}
	s.mu.Lock()
	s.procs[name] = p
	s.mu.Unlock()
	s.waitListening(name, p)
}

// kill stops daemon name at once (kill -9 for a binary) and waits for it.
func (s *suite) kill(name string) {
	s.t.Helper()
	s.mu.Lock()
	p := s.procs[name]
	delete(s.procs, name)
	s.mu.Unlock()
	if p == nil {
		s.t.Fatalf("kill %s: not running", name)
	}
	p.stop()
	<-p.done
}

// restart is kill then start: same port, same database.
func (s *suite) restart(name string) {
	s.t.Helper()
	s.kill(name)
	s.start(name)
}

func (s *suite) stopAll() {
	for i := len(s.daemons) - 1; i >= 0; i-- {
		s.mu.Lock()
		p := s.procs[s.daemons[i]]
		s.mu.Unlock()
		if p != nil {
			p.stop()
			<-p.done
		}
	}
	for _, f := range s.logs {
		f.Close()
	}
}

// waitListening waits until the daemon accepts HTTP connections; a daemon
// that exits first fails the test (with its log in binary mode).
func (s *suite) waitListening(name string, p *proc) {
	s.t.Helper()
	err := waitFor(s.t.Context(), 30*time.Second, func() (bool, error) {
		select {
		case <-p.done:
			return false, fmt.Errorf("%s exited: %v%s", name, p.err, s.logTail(name))
		default:
		}
		resp, err := http.Get(s.url(name) + "/")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return true, nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
}

// startBinary runs bin/name with its flags; stderr goes to name.log.
func (s *suite) startBinary(name string) (*proc, error) {
	s.mu.Lock()
	logf := s.logs[name]
	if logf == nil {
		var err error
		if logf, err = os.Create(filepath.Join(s.dir, name+".log")); err != nil {
			s.mu.Unlock()
			return nil, err
		}
		s.logs[name] = logf
	}
	s.mu.Unlock()
	cmd := exec.Command(filepath.Join(s.bin, name), s.args(name)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.dir}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{done: make(chan struct{}), stop: func() { _ = cmd.Process.Signal(syscall.SIGKILL) }}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

// logTail is the end of a binary daemon's log, for failure messages.
func (s *suite) logTail(name string) string {
	if s.bin == "" {
		return ""
	}
	b, _ := os.ReadFile(filepath.Join(s.dir, name+".log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return "\n" + name + " log:\n" + string(b)
}

// buildBinaries builds the daemons' binaries from cmd/* into a temporary
// directory.
func buildBinaries(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	args := []string{"build", "-o", dir + "/"}
	for _, n := range suiteDaemons {
		args = append(args, "github.com/hmsuite/hms/cmd/"+n)
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

// daemon is what the in-process mode needs of a started daemon.
type daemon interface {
	Run(ctx context.Context) error
	Close() error
}

// startInProcess starts daemon name in this process from the flags its
// binary takes, as hms up does; stop cancels it.
func startInProcess(name string, args []string) (*proc, error) {
	ctx, cancel := context.WithCancel(context.Background())
	d, closers, err := inProcess(ctx, name, args)
	if err != nil {
		cancel()
		return nil, err
	}
	p := &proc{done: make(chan struct{}), stop: cancel}
	go func() {
		defer close(p.done)
		p.err = d.Run(ctx)
		for _, c := range closers {
			c.Close()
		}
	}()
	return p, nil
}

func inProcess(ctx context.Context, name string, args []string) (daemon, []io.Closer, error) {
	noenv := func(string) string { return "" }
	f := cli.NewFlagSet(name, noenv, io.Discard)
	kafka := func(brokers []string) (*bus.Kafka, error) {
		return bus.NewKafka(bus.KafkaConfig{Brokers: brokers, ClientID: name})
	}
	af := auth.RegisterFlags(f)
	switch name {
	case "sls":
		fl := layout.RegisterFlags(f)
		return startWith(f, args, func() (daemon, []io.Closer, error) {
			cfg, err := fl.Config()
			if err != nil {
				return nil, nil, err
			}
			if cfg.Auth, err = af.Config(); err != nil {
				return nil, nil, err
			}
			d, err := layout.StartDaemon(ctx, cfg)
			return d, nil, err
		})
	case "hsm":
		fl := statemgr.RegisterFlags(f, noenv)
		return startWith(f, args, func() (daemon, []io.Closer, error) {
			cfg, err := fl.Config()
			if err != nil {
				return nil, nil, err
			}
			if cfg.Auth, err = af.Config(); err != nil {
				return nil, nil, err
			}
			pub := bus.NewUnread()
			cfg.Publisher = pub
			d, err := statemgr.StartDaemon(ctx, cfg)
			return d, []io.Closer{pub}, err
		})
	case "hbtd":
		fl := heartbeat.RegisterFlags(f)
		return startWith(f, args, func() (daemon, []io.Closer, error) {
			listen, o, err := fl.Config()
			if err != nil {
				return nil, nil, err
			}
			if o.Auth, err = af.Config(); err != nil {
				return nil, nil, err
			}
			d, err := heartbeat.StartDaemon(ctx, listen, o)
			return d, nil, err
		})
	case "hmnfd":
		fl := fanout.RegisterFlags(f)
		return startWith(f, args, func() (daemon, []io.Closer, error) {
			cfg, err := fl.Config()
			if err != nil {
				return nil, nil, err
			}
			if cfg.Auth, err = af.Config(); err != nil {
				return nil, nil, err
			}
			d, err := fanout.StartDaemon(ctx, cfg)
			return d, nil, err
		})
	case "bss":
		fl := ipxe.RegisterFlags(f)
		return startWith(f, args, func() (daemon, []io.Closer, error) {
			cfg, err := fl.Config()
			if err != nil {
				return nil, nil, err
			}
			if cfg.Auth, err = af.Config(); err != nil {
				return nil, nil, err
			}
			k, err := kafka(*fl.Brokers)
			if err != nil {
				return nil, nil, err
			}
			cfg.Publisher = k
			d, err := ipxe.StartDaemon(ctx, cfg)
			return d, []io.Closer{k}, err
		})
	case "reds":
		fl := discovery.RegisterFlags(f)
		return startWith(f, args, func() (daemon, []io.Closer, error) {
			cfg, err := fl.Config()
			if err != nil {
				return nil, nil, err
			}
			if cfg.Auth, err = af.Config(); err != nil {
				return nil, nil, err
			}
			k, err := kafka(*fl.Brokers)
			if err != nil {
				return nil, nil, err
			}
			cfg.Bus = k
			d, err := discovery.StartDaemon(ctx, cfg)
			return d, []io.Closer{k}, err
		})
	case "nodes":
		fl := nodes.RegisterFlags(f)
		return startWith(f, args, func() (daemon, []io.Closer, error) {
			cfg, err := fl.Config()
			if err != nil {
				return nil, nil, err
			}
			if cfg.Auth, err = af.Config(); err != nil {
				return nil, nil, err
			}
			d, err := nodes.StartDaemon(ctx, cfg)
			return d, nil, err
		})
	}
	return nil, nil, fmt.Errorf("no daemon %q", name)
}

// startWith parses args, then starts the daemon; what it opened is closed
// if the start fails.
func startWith(f *cli.FlagSet, args []string, start func() (daemon, []io.Closer, error)) (daemon, []io.Closer, error) {
	if err := f.ParseOrUsage(args); err != nil {
		return nil, nil, err
	}
	d, closers, err := start()
	if err != nil {
		for _, c := range closers {
			c.Close()
		}
		return nil, nil, err
	}
	return d, closers, nil
}

// freePort is a port free on 127.0.0.1 now (the daemons take fixed ports so
// a restarted one comes back where its peers look for it).
func freePort(t *testing.T, network string) int {
	t.Helper()
	if network == "udp4" {
		c, err := net.ListenPacket(network, "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.LocalAddr().(*net.UDPAddr).Port
	}
	ln, err := net.Listen(network, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// waitFor polls cond until it holds, fails, ctx ends or the guard passes.
// The suite runs on real clocks (DHCP, discovery walks, heartbeats), so the
// guard is against a hang, not a timing assertion.
func waitFor(ctx context.Context, guard time.Duration, cond func() (bool, error)) error {
	deadline := time.NewTimer(guard)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("not within %s", guard)
		case <-tick.C:
		}
	}
}
