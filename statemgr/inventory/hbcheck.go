package inventory

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"time"

	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// heartbeatCursor is the outbox cursor of the heartbeat check.
const heartbeatCursor = "heartbeat-check"

// hbStatesChunk is the most xnames one hbtd query carries.
const hbStatesChunk = 1000

// Heartbeats is what the heartbeat check asks hbtd (POST /hmi/v1/hbstates;
// *agent.Client).
type Heartbeats interface {
	States(ctx context.Context, xnames []string) ([]agent.HBState, error)
}

// HeartbeatCheckConfig configures a HeartbeatCheck. Zero values take the
// defaults noted.
type HeartbeatCheckConfig struct {
	// HBTD says which nodes heartbeat. Required.
	HBTD Heartbeats
	// After is the clock of the waits between failed hbtd queries
	// (time.After); tests inject their own.
	After func(time.Duration) <-chan time.Time
	Log   *slog.Logger
}

// HeartbeatCheck is what the shipped HSM does after a walk (smd's
// discover.go): a Node that discovery finds On is set Ready if hbtd says it
// heartbeats. hbtd tells HSM only of changes, so a node whose heartbeats
// started while HSM refused them (a node put back after its removal beats
// while HSM still has it Empty, and Empty -> Ready is not a transition
// HSM allows) would otherwise stay On for good. Here it follows HSM's own
// SCN outbox: every Node SCN with State On is checked, whatever set it, and
// at start every Node already On.
type HeartbeatCheck struct {
	store *Store
	cfg   HeartbeatCheckConfig
}

// NewHeartbeatCheck returns a heartbeat check over disc's store.
func NewHeartbeatCheck(disc *Discovery, cfg HeartbeatCheckConfig) *HeartbeatCheck {
	if cfg.After == nil {
		cfg.After = time.After
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &HeartbeatCheck{store: disc.store, cfg: cfg}
}

// Run checks the nodes On now, then those the SCN outbox says turn On,
// until ctx is cancelled. A failed hbtd query is retried, with backoff,
// before the cursor moves past its SCNs.
func (h *HeartbeatCheck) Run(ctx context.Context) error {
	cur, err := h.store.cursor(ctx, heartbeatCursor)
	if err != nil {
		return fmt.Errorf("heartbeat check: %w", err)
	}
	f, err := core.ParseFilter(url.Values{"type": {string(xname.Node)}, "state": {hsm.StateOn}}, h.store.vocab)
	if err != nil {
		return err
	}
	on, err := h.store.comp.Components(ctx, f)
	if err != nil {
		return fmt.Errorf("heartbeat check: %w", err)
	}
	ids := make([]string, 0, len(on))
	for _, c := range on {
		ids = append(ids, c.ID)
	}
	if !h.check(ctx, ids) {
		return nil
	}
	return h.store.followOutbox(ctx, heartbeatCursor, cur, h.cfg.Log, func(rows []core.OutboxRow) bool {
		var ids []string
		for _, row := range rows {
			if row.SCN.State != hsm.StateOn {
				continue
			}
			for _, id := range row.SCN.Components {
				if xname.TypeOf(id) == xname.Node {
					ids = append(ids, id)
				}
			}
		}
		return h.check(ctx, ids)
	})
}

// check sets Ready those of ids that hbtd says heartbeat, retrying a
// failed query until it succeeds; false means ctx ended.
func (h *HeartbeatCheck) check(ctx context.Context, ids []string) bool {
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for chunk := range slices.Chunk(ids, hbStatesChunk) {
		wait, failing := time.Second, false
		for {
			err := h.readyIfBeating(ctx, chunk)
			if err == nil {
				break
			}
			if !failing {
				h.cfg.Log.WarnContext(ctx, "heartbeat_check_failed", "nodes", len(chunk), "err", err)
				failing = true
			}
			select {
			case <-ctx.Done():
				return false
			case <-h.cfg.After(wait):
			}
			wait = min(2*wait, 30*time.Second)
		}
	}
	return ctx.Err() == nil
}

// readyIfBeating asks hbtd about ids and sets those that heartbeat Ready,
// through the state machine (On -> Ready; a node that moved on meanwhile
// is left alone).
func (h *HeartbeatCheck) readyIfBeating(ctx context.Context, ids []string) error {
	sts, err := h.cfg.HBTD.States(ctx, ids)
	if err != nil {
		return fmt.Errorf("hbtd heartbeat states: %w", err)
	}
	var beating []string
	for _, st := range sts {
		if st.Heartbeating {
			beating = append(beating, st.XName)
		}
	}
	if len(beating) == 0 {
		return nil
	}
	ctx = core.WithCause(ctx, core.Cause{Kind: hsm.CauseHeartbeatCheck})
	n, err := h.store.comp.UpdateState(ctx, beating, component.StateUpdate{State: hsm.StateReady})
	if err != nil {
		return fmt.Errorf("set heartbeating nodes Ready: %w", err)
	}
	if n > 0 {
		h.cfg.Log.InfoContext(ctx, "heartbeating_nodes_ready", "nodes", n)
	}
	return nil
}
