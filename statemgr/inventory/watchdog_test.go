package inventory

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/redfish"
)

// rfTimers is an injected clock for the watchdog: waits end when fire is called.
type rfTimers struct {
	mu      sync.Mutex
	pending []chan time.Time
}

func (f *rfTimers) after(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	f.mu.Lock()
	f.pending = append(f.pending, ch)
	f.mu.Unlock()
	return ch
}

// fire ends every pending wait and returns how many there were.
func (f *rfTimers) fire() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ch := range f.pending {
		ch <- time.Time{}
	}
	n := len(f.pending)
	f.pending = nil
	return n
}

// rfEventually checks cond, calling step between checks, once every
// goroutine of the test's synctest bubble is blocked.
func rfEventually(t *testing.T, what string, step func(), cond func() bool) {
	t.Helper()
	for range 1000 {
		synctest.Wait()
		if cond() {
			return
		}
		step()
	}
	t.Fatalf("%s: not after 1000 steps", what)
}

func TestWatchdogStandby(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const bmcX, node = "x3000c0s4b0", "x3000c0s4b0n0"
		e := newRFEnv(t, DiscoveryConfig{})
		e.bmc(bmcX, 1, redfishsim.Faults{})
		e.Must(201, "POST", "/Inventory/RedfishEndpoints", hsm.RedfishEndpoint{ID: bmcX, User: "root", Password: rfPassword, RediscoverOnUpdate: true})
		if st := e.waitDiscovered(bmcX).DiscoveryInfo.LastDiscoveryStatus; st != string(redfish.StatusOK) {
			t.Fatalf("discovery: %s", st)
		}
		timers := &rfTimers{}
		w := NewWatchdog(e.disc, WatchdogConfig{After: timers.after})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = w.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		polling := func() bool { w.mu.Lock(); defer w.mu.Unlock(); return w.polling[node] }
		state := func() string { c, _ := e.store.comp.Component(node); return c.State }
		setState := func(s string) {
			e.Must(204, "PATCH", "/State/Components/"+node+"/StateData", map[string]string{"State": s})
		}
		noop := func() {}

		// Standby while the BMC says On: polled, left alone; leaving Standby stops the poll.
		setState(hsm.StateReady)
		setState(hsm.StateStandby)
		rfEventually(t, "poll started", noop, polling)
		timers.fire()
		rfEventually(t, "second read scheduled", noop, func() bool { timers.mu.Lock(); defer timers.mu.Unlock(); return len(timers.pending) > 0 })
		if got := state(); got != hsm.StateStandby {
			t.Fatalf("state after a read of On = %s, want Standby", got)
		}
		setState(hsm.StateReady)
		rfEventually(t, "poll stopped after leaving Standby", func() { timers.fire() }, func() bool { return !polling() })
		if got := state(); got != hsm.StateReady {
			t.Fatalf("state = %s, want Ready", got)
		}

		// Standby again, and the BMC now says Off: the node is set Off.
		rfPowerOff(t, e, node)
		setState(hsm.StateStandby)
		rfEventually(t, "node set Off", func() { timers.fire() }, func() bool { return state() == hsm.StateOff })
		rfEventually(t, "poll stopped after Off", func() { timers.fire() }, func() bool { return !polling() })
	})
}

// rfPowerOff turns node's system off at its simulated BMC, as a user would.
func rfPowerOff(t *testing.T, e *rfEnv, node string) {
	t.Helper()
	var ce hsm.ComponentEndpoint
	if err := json.Unmarshal(e.Must(200, "GET", "/Inventory/ComponentEndpoints/"+node, nil), &ce); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", "http://"+ce.RedfishEndpointID+ce.RedfishSystemInfo.Actions.Reset.Target,
		strings.NewReader(`{"ResetType":"ForceOff"}`))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth("root", rfPassword)
	resp, err := e.router.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Fatalf("reset: status %d", resp.StatusCode)
	}
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusOK {
		t.Logf("reset: status %d", resp.StatusCode)
	}
}

// lockedBuffer is a log sink the watchdog's goroutines can share.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// TestWatchdogLogsAFailingReadOnce: a Standby node without a BMC endpoint is
// read every Every; the failure is logged once, not on every read.
func TestWatchdogLogsAFailingReadOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const node = "x3000c0s9b0n0"
		e := newRFEnv(t, DiscoveryConfig{})
		e.Must(204, "POST", "/State/Components", map[string]any{"Components": []map[string]string{{"ID": node, "State": hsm.StateStandby}}})
		timers := &rfTimers{}
		var logs lockedBuffer
		w := NewWatchdog(e.disc, WatchdogConfig{After: timers.after, Log: slog.New(slog.NewTextHandler(&logs, nil))})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = w.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		waiting := func() bool { timers.mu.Lock(); defer timers.mu.Unlock(); return len(timers.pending) == 1 }
		for range 5 {
			rfEventually(t, "watchdog waiting", func() {}, waiting)
			timers.fire()
		}
		rfEventually(t, "watchdog waiting after 5 reads", func() {}, waiting)
		if n := strings.Count(logs.String(), "standby_power_read_failed"); n != 1 {
			t.Fatalf("5 failed reads logged %d times, want once:\n%s", n, logs.String())
		}
	})
}
