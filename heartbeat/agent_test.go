package heartbeat

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/internal/problem"
)

func TestAgentAndClient(t *testing.T) {
	svc, h := newTestAPI(t)
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := agent.NewClient(srv.URL+agent.BasePath, nil)
	ctx := t.Context()

	single := &agent.Agent{Client: c, XNames: []string{"x0c0s0b0n0"}, Interval: time.Second}
	if err := single.BeatOnce(ctx); err != nil {
		t.Fatal(err)
	}
	relay := &agent.Agent{Client: c, XNames: []string{"x0c0s1b0n0", "x0c0s1b0n1"}, Interval: time.Second}
	if err := relay.BeatOnce(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := c.States(ctx, []string{"x0c0s0b0n0", "x0c0s1b0n0", "x0c0s1b0n1", "x0c0s2b0n0"})
	if err != nil {
		t.Fatal(err)
	}
	want := []agent.HBState{{XName: "x0c0s0b0n0", Heartbeating: true}, {XName: "x0c0s1b0n0", Heartbeating: true}, {XName: "x0c0s1b0n1", Heartbeating: true}, {XName: "x0c0s2b0n0", Heartbeating: false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("States (-want +got):\n%s", diff)
	}
	st, err := c.State(ctx, "x0c0s1b0n1")
	if err != nil || !st.Heartbeating {
		t.Fatalf("State = %+v, %v; want heartbeating", st, err)
	}
	p, err := c.PatchParams(ctx, map[string]string{"Warntime": "4", "Errtime": "8"})
	if err != nil || p.Warntime != "4" || p.Errtime != "8" {
		t.Fatalf("PatchParams = %+v, %v", p, err)
	}
	if p2, err := c.Params(ctx); err != nil || p2 != p {
		t.Fatalf("Params = %+v, %v; want %+v", p2, err, p)
	}
	_, err = c.PatchParams(ctx, map[string]string{"Errtime": "zero"})
	if !errors.Is(err, problem.ErrInvalid) {
		t.Fatalf("bad PatchParams error %v, want ErrInvalid", err)
	}
	if err := c.Beat(ctx, agent.Heartbeat{Component: "x0c0s0b0n0"}); !errors.Is(err, problem.ErrInvalid) {
		t.Fatalf("bad Beat error %v, want ErrInvalid", err)
	}
	if n := svc.Tracker.Counts()[Alive]; n != 3 {
		t.Fatalf("%d alive, want 3", n)
	}
}

// flaky is hbtd behind a switch: while down it answers 503.
type flaky struct {
	h    http.Handler
	down atomic.Bool
	hits atomic.Int64
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.hits.Add(1)
	if f.down.Load() {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	f.h.ServeHTTP(w, r)
}

// TestAgentRun beats every Interval and keeps going while hbtd is away.
func TestAgentRun(t *testing.T) {
	svc, h := newTestAPI(t)
	synctest.Test(t, func(t *testing.T) {
		f := &flaky{h: h}
		c := agent.NewClient("http://hbtd.test", &http.Client{Transport: handlerTransport{f}})
		var logs bytes.Buffer
		a := &agent.Agent{Client: c, XNames: []string{"x0c0s0b0n0"}, Interval: 3 * time.Second,
			Log: slog.New(slog.NewTextHandler(&logs, nil))}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- a.Run(ctx) }()
		time.Sleep(10 * time.Second)
		if n := f.hits.Load(); n != 4 {
			t.Fatalf("%d beats in 10 s at a 3 s interval, want 4", n)
		}
		f.down.Store(true)
		time.Sleep(9 * time.Second)
		f.down.Store(false)
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if n := f.hits.Load(); n != 8 {
			t.Fatalf("%d beats after 22 s, want 8: the agent must keep beating through failures", n)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		if got := svc.Tracker.State("x0c0s0b0n0"); got != Alive {
			t.Fatalf("state %v, want alive", got)
		}
		// The agent says it started and that hbtd took its first heartbeat,
		// and logs a run of failures once.
		for _, msg := range []string{"heartbeat_agent_started", "heartbeat_accepted", "heartbeat_failed", "heartbeat_recovered"} {
			if n := strings.Count(logs.String(), "msg="+msg+" ") + strings.Count(logs.String(), "msg="+msg+"\n"); n != 1 {
				t.Errorf("%s logged %d times, want once:\n%s", msg, n, logs.String())
			}
		}
	})
	if err := (&agent.Agent{Client: agent.NewClient("http://127.0.0.1:1", nil)}).Run(t.Context()); err == nil {
		t.Fatal("agent without xnames ran")
	}
}
