// Package agent is the node side of the heartbeat tracker (hbtd): the
// heartbeat wire types, hbtd's typed client and the agent loop cmd/hbagent
// runs. It links no database, bus or metrics library, so the agent binary
// that runs on every node stays small.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Agent is the node side: it sends a heartbeat for each of its xnames every
// Interval, over keep-alive connections. With one xname it uses POST
// /heartbeat, as a node does; with several (a service node relaying for the
// nodes behind it, or the simulator) one POST /heartbeats per interval.
type Agent struct {
	Client   *Client
	XNames   []string
	Hostname string
	NID      string
	Status   string
	Interval time.Duration
	Log      *slog.Logger
	// Now is the clock for time stamps; nil means time.Now.
	Now func() time.Time
}

// Run beats at once and then every Interval until ctx is cancelled. Failed
// beats are logged (once per run of failures) and retried at the next interval.
func (a *Agent) Run(ctx context.Context) error {
	if len(a.XNames) == 0 {
		return errors.New("heartbeat agent: no xname to beat for")
	}
	if a.Interval <= 0 {
		return fmt.Errorf("heartbeat agent: interval %v must be positive", a.Interval)
	}
	log := a.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tk := time.NewTicker(a.Interval)
	defer tk.Stop()
	log.Info("heartbeat_agent_started", "xnames", len(a.XNames), "first_xname", a.XNames[0], "interval", a.Interval)
	failing, accepted := false, false
	for {
		err := a.BeatOnce(ctx)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			log.Warn("heartbeat_failed", "err", err)
			failing = true
		case err == nil && failing:
			log.Info("heartbeat_recovered")
			failing = false
		}
		if err == nil && !accepted {
			// The one line that tells whoever started the agent it works.
			log.Info("heartbeat_accepted", "xnames", len(a.XNames))
			accepted = true
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tk.C:
		}
	}
}

// BeatOnce sends one heartbeat for every xname.
func (a *Agent) BeatOnce(ctx context.Context) error {
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	status := a.Status
	if status == "" {
		status = "OK"
	}
	ts := now().Format(time.RFC3339Nano)
	ctx, cancel := context.WithTimeout(ctx, max(a.Interval, time.Second))
	defer cancel()
	if len(a.XNames) == 1 {
		return a.Client.Beat(ctx, Heartbeat{Component: a.XNames[0], Hostname: a.Hostname, NID: a.NID, Status: status, TimeStamp: ts})
	}
	hbs := make([]Heartbeat, len(a.XNames))
	for i, x := range a.XNames {
		hbs[i] = Heartbeat{Component: x, Status: status, TimeStamp: ts}
	}
	return a.Client.Beats(ctx, hbs)
}
