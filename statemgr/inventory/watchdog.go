package inventory

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/redfish"
)

// watchdogCursor is the outbox cursor of the Standby watchdog.
const watchdogCursor = "standby-watchdog"

// WatchdogConfig configures a Watchdog. Zero values take the defaults noted.
type WatchdogConfig struct {
	// Delay is the wait before the first power read (30 s, as HMS).
	Delay time.Duration
	// Every is the wait between reads (10 s, as HMS).
	Every time.Duration
	// After is the clock used for waits (time.After); tests inject their own.
	After func(time.Duration) <-chan time.Time
	Log   *slog.Logger
}

// Watchdog is HSM's Standby watchdog: a consumer of HSM's own SCN outbox
// that, for every Node entering Standby (heartbeats stopped), reads the
// node's power state from its BMC after Delay and then every Every, sets the
// node Off when the BMC says Off, and gives up as soon as the node leaves
// Standby.
type Watchdog struct {
	store *Store
	disc  *Discovery
	cfg   WatchdogConfig

	mu      sync.Mutex
	polling map[string]bool
}

// NewWatchdog returns a watchdog over disc's store, reading power states
// through disc's endpoints and credentials.
func NewWatchdog(disc *Discovery, cfg WatchdogConfig) *Watchdog {
	if cfg.Delay <= 0 {
		cfg.Delay = 30 * time.Second
	}
	if cfg.Every <= 0 {
		cfg.Every = 10 * time.Second
	}
	if cfg.After == nil {
		cfg.After = time.After
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Watchdog{store: disc.store, disc: disc, cfg: cfg, polling: map[string]bool{}}
}

// Run follows the SCN outbox until ctx is cancelled. Polls are not
// persisted: at start, every Node already in Standby is polled.
func (w *Watchdog) Run(ctx context.Context) error {
	cur, err := w.store.cursor(ctx, watchdogCursor)
	if err != nil {
		return fmt.Errorf("standby watchdog: %w", err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	f, err := core.ParseFilter(url.Values{"type": {string(xname.Node)}, "state": {hsm.StateStandby}}, w.store.vocab)
	if err != nil {
		return err
	}
	standby, err := w.store.comp.Components(ctx, f)
	if err != nil {
		return fmt.Errorf("standby watchdog: %w", err)
	}
	for _, c := range standby {
		w.watch(ctx, &wg, c.ID)
	}
	return w.store.followOutbox(ctx, watchdogCursor, cur, w.cfg.Log, func(rows []core.OutboxRow) bool {
		for _, row := range rows {
			if row.SCN.State != hsm.StateStandby {
				continue
			}
			for _, id := range row.SCN.Components {
				w.watch(ctx, &wg, id)
			}
		}
		return true
	})
}

// watch starts polling node id unless it is polled already.
func (w *Watchdog) watch(ctx context.Context, wg *sync.WaitGroup, id string) {
	if xname.TypeOf(id) != xname.Node {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.polling[id] {
		return
	}
	w.polling[id] = true
	wg.Go(func() {
		defer func() {
			w.mu.Lock()
			delete(w.polling, id)
			w.mu.Unlock()
		}()
		w.poll(ctx, id)
	})
}

// poll reads id's power state until it is Off or id leaves Standby. A node
// whose power cannot be read (no BMC endpoint, say) would log every Every; its
// failure is logged once, and again only after a read has succeeded.
func (w *Watchdog) poll(ctx context.Context, id string) {
	wait := w.cfg.Delay
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.cfg.After(wait):
		}
		wait = w.cfg.Every
		if c, err := w.store.comp.Component(id); err != nil || c.State != hsm.StateStandby {
			return
		}
		state, err := w.powerState(ctx, id)
		if err != nil {
			if !failing {
				w.cfg.Log.InfoContext(ctx, "standby_power_read_failed", "xname", id, "err", err, "retry_every", w.cfg.Every)
			}
			failing = true
			continue
		}
		failing = false
		if state != hsm.StateOff {
			continue
		}
		off := core.WithCause(ctx, core.Cause{Kind: hsm.CauseWatchdog})
		if _, err := w.store.comp.UpdateState(off, []string{id}, component.StateUpdate{State: hsm.StateOff}); err != nil {
			w.cfg.Log.WarnContext(ctx, "standby_set_off_failed", "xname", id, "err", err)
			continue
		}
		w.cfg.Log.InfoContext(ctx, "standby_node_off", "xname", id)
		return
	}
}

// powerState reads the power state of node id through its ComponentEndpoint.
func (w *Watchdog) powerState(ctx context.Context, id string) (string, error) {
	raw, err := w.store.rawQuery(ctx, "rf_component_endpoints", "id", [][2]any{{"id", []string{id}}})
	if err != nil {
		return "", err
	}
	if len(raw) == 0 {
		return "", problem.NotFoundf("component endpoint %s: none", id)
	}
	var ce hsm.ComponentEndpoint
	if err := json.Unmarshal(raw[0], &ce); err != nil {
		return "", fmt.Errorf("decode component endpoint %s: %w", id, err)
	}
	row, err := w.store.rfEndpointRow(ctx, ce.RedfishEndpointID)
	if err != nil {
		return "", err
	}
	ep, err := w.disc.endpoint(row)
	if err != nil {
		return "", err
	}
	state, _, err := redfish.PowerState(ctx, ep, redfish.Options{Timeout: w.disc.cfg.Timeout,
		HTTPClient: w.disc.cfg.HTTPClient}, ce.OdataID)
	return state, err
}
