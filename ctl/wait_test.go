package ctl_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hmsuite/hms/ctl"
	"github.com/hmsuite/hms/statemgr/client"
)

// fakeClock is the clock of `hms wait`: Sleep moves it on at once and then
// calls tick, which may change the machine between two polls.
type fakeClock struct {
	now    time.Time
	sleeps int
	tick   func(n int)
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.now = c.now.Add(d)
	c.sleeps++
	if c.tick != nil {
		c.tick(c.sleeps)
	}
	return nil
}

func TestWait(t *testing.T) {
	urls := startSuite(t)
	seedHSM(t, urls["hsm"]) // s1 Ready, s2 Standby, s3 Ready
	e := suiteEnv(t, urls)
	h := client.New(urls["hsm"], nil, "test")
	opts := func(c *fakeClock) ctl.Options {
		return ctl.Options{Getenv: e, Now: c.Now, Sleep: c.Sleep}
	}

	t.Run("timeout", func(t *testing.T) {
		c := &fakeClock{now: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
		r := hmsWith(t, opts(c), "wait", "-timeout", "10s", "-interval", "2s", "x3000c0s1b0n0", "x3000c0s2b0n0", "x3000c0s9b0n0")
		if r.code() != 1 {
			t.Fatalf("exit %d (%v), want 1", r.code(), r.err)
		}
		want := "timed out after 10s: 2 of 3 not Ready: x3000c0s2b0n0 (Standby), x3000c0s9b0n0 (not in HSM)"
		if !strings.Contains(r.err.Error(), want) {
			t.Errorf("error %q, want it to contain %q", r.err, want)
		}
		if c.sleeps != 5 {
			t.Errorf("%d polls between start and deadline, want 5 (every 2s for 10s)", c.sleeps)
		}
	})
	t.Run("ready", func(t *testing.T) {
		c := &fakeClock{now: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
		c.tick = func(n int) {
			if n == 2 {
				mustOK(t, h.StateData(t.Context(), "x3000c0s2b0n0", "Ready", "", false))
			}
		}
		r := hmsWith(t, opts(c), "wait", "-state", "Ready", "x3000c0s1b0n0", "x3000c0s2b0n0")
		if r.err != nil || c.sleeps != 2 || !strings.Contains(r.stderr, "2 of 2 Ready") {
			t.Errorf("wait: %v after %d polls, stderr %q", r.err, c.sleeps, r.stderr)
		}
	})
	t.Run("any of two states", func(t *testing.T) {
		c := &fakeClock{}
		if r := hmsWith(t, opts(c), "wait", "-state", "standby,ready", "x3000c0s2b0n0", "x3000c0s3b0n0"); r.err != nil || c.sleeps != 0 {
			t.Errorf("wait: %v after %d polls", r.err, c.sleeps)
		}
	})
	t.Run("hsm down", func(t *testing.T) {
		c := &fakeClock{}
		r := hmsWith(t, opts(c), "wait", "-hsm-url", closedURL(t), "-timeout", "4s", "x3000c0s1b0n0")
		if r.code() != 1 || !strings.Contains(r.err.Error(), "timed out after 4s: cannot reach hsm") || c.sleeps != 2 {
			t.Errorf("wait with hsm down: code %d, %v after %d polls; want it waited out, then a timeout naming hsm", r.code(), r.err, c.sleeps)
		}
	})
}
