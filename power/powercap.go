package power

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/power/pcs"
)

// Power-cap task types and statuses, as PCS spells them.
const (
	CapSnapshot   = "snapshot"
	CapPatch      = "patch"
	CapNew        = "new"
	CapInProgress = "in-progress"
	CapCompleted  = "completed"
)

// CapTask is a power-cap snapshot or patch.
type CapTask struct {
	ID         string         `json:"taskID"`
	Type       string         `json:"type"`
	Created    time.Time      `json:"taskCreateTime"`
	Expires    time.Time      `json:"automaticExpirationTime"`
	Status     string         `json:"taskStatus"`
	Counts     pcs.TaskCounts `json:"taskCounts"`
	Components []CapComponent `json:"components,omitempty"`
}

// CapComponent is one component of a power-cap task.
type CapComponent struct {
	Xname    string       `json:"xname"`
	Error    string       `json:"error,omitempty"`
	Limits   *CapLimits   `json:"limits,omitempty"`
	Controls []CapControl `json:"powerCapLimits,omitempty"`
	// Set are the controls a patch asks for (not answered).
	Set         []CapSetting `json:"-"`
	unsupported bool
}

// CapLimits are a node's host power limits.
type CapLimits struct {
	HostLimitMax *int `json:"hostLimitMax,omitempty"`
	HostLimitMin *int `json:"hostLimitMin,omitempty"`
	PowerupPower *int `json:"powerupPower,omitempty"`
	// supply is the node control's PowerCapacityWatts (CAPMC's
	// capabilities; PCS does not answer it).
	supply *int
}

// CapControl is one power control and its limits.
type CapControl struct {
	Name    string `json:"name"`
	Current *int   `json:"currentValue,omitempty"`
	Max     *int   `json:"maximumValue,omitempty"`
	Min     *int   `json:"minimumValue,omitempty"`
}

// CapSetting is a control value a patch sets.
type CapSetting struct {
	Name  string `json:"name"`
	Value int    `json:"value"`
}

// capStore keeps power-cap tasks in memory and in the database.
type capStore struct {
	mu    sync.Mutex
	tasks map[string]*CapTask
}

// loadCaps reads the stored power-cap tasks; one a restart interrupted is
// completed with an error on its unfinished components.
func (s *Service) loadCaps(ctx context.Context) error {
	rows, err := s.store.db.R.QueryContext(ctx, `SELECT body FROM powercap_tasks`)
	if err != nil {
		return fmt.Errorf("load power-cap tasks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var body string
		var t CapTask
		if err := rows.Scan(&body); err != nil {
			return fmt.Errorf("load power-cap tasks: %w", err)
		}
		if err := json.Unmarshal([]byte(body), &t); err != nil {
			return fmt.Errorf("load power-cap task: %w", err)
		}
		if t.Status != CapCompleted {
			for i := range t.Components {
				if t.Components[i].Error == "" && t.Components[i].Controls == nil {
					t.Components[i].Error = "Interrupted by a pcs restart"
				}
			}
			t.Status = CapCompleted
			t.Counts = capCounts(t.Components)
		}
		s.caps.tasks[t.ID] = &t
	}
	return rows.Err()
}

func (s *Service) saveCap(ctx context.Context, t *CapTask) error {
	s.caps.mu.Lock()
	body, err := json.Marshal(t)
	s.caps.mu.Unlock()
	if err != nil {
		return err
	}
	return s.store.db.WriteTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO powercap_tasks (id, created_at, body) VALUES (?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET body = excluded.body`, t.ID, t.Created.UnixNano(), string(body)); err != nil {
			return fmt.Errorf("store power-cap task: %w", err)
		}
		return nil
	})
}

func capCounts(cs []CapComponent) pcs.TaskCounts {
	c := pcs.TaskCounts{Total: len(cs)}
	for _, x := range cs {
		switch {
		case x.unsupported:
			c.Unsupported++
		case x.Error != "":
			c.Failed++
		case x.Controls != nil || x.Limits != nil:
			c.Succeeded++
		default:
			c.New++
		}
	}
	return c
}

// CreateCap stores a snapshot (comps carry only xnames) or a patch and
// starts it; Run is not needed, the task runs on its own goroutine bounded
// by ctx of the daemon through runCtx.
func (s *Service) CreateCap(ctx context.Context, kind string, comps []CapComponent) (string, error) {
	now := time.Now().UTC()
	t := &CapTask{ID: uuid.NewString(), Type: kind, Created: now, Expires: now.Add(s.cfg.TTL), Status: CapNew,
		Components: comps}
	t.Counts = capCounts(comps)
	if err := s.saveCap(ctx, t); err != nil {
		return "", err
	}
	s.caps.mu.Lock()
	s.caps.tasks[t.ID] = t
	s.caps.mu.Unlock()
	select {
	case s.capQueue <- t:
	default:
		return "", problem.Unavailablef("too many power-cap tasks waiting to start")
	}
	return t.ID, nil
}

// Caps lists the power-cap tasks without their components, oldest first.
func (s *Service) Caps() []CapTask {
	s.caps.mu.Lock()
	defer s.caps.mu.Unlock()
	out := make([]CapTask, 0, len(s.caps.tasks))
	for _, t := range s.caps.tasks {
		c := *t
		c.Components = nil
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b CapTask) int { return a.Created.Compare(b.Created) })
	return out
}

// Cap returns one power-cap task with its components.
func (s *Service) Cap(id string) (CapTask, error) {
	s.caps.mu.Lock()
	defer s.caps.mu.Unlock()
	t, ok := s.caps.tasks[id]
	if !ok {
		return CapTask{}, problem.NotFoundf("Key /powercaptask/%s does not exist", id)
	}
	c := *t
	c.Components = slices.Clone(t.Components)
	return c, nil
}

// runCap carries a power-cap task out, one goroutine per component.
func (s *Service) runCap(ctx context.Context, t *CapTask) {
	s.caps.mu.Lock()
	t.Status = CapInProgress
	comps := slices.Clone(t.Components)
	s.caps.mu.Unlock()
	s.capAll(ctx, t.Type, comps)
	if ctx.Err() != nil {
		return // stopping: loadCaps completes it on the next start
	}
	s.caps.mu.Lock()
	t.Components, t.Status, t.Counts = comps, CapCompleted, capCounts(comps)
	s.caps.mu.Unlock()
	if err := s.saveCap(context.WithoutCancel(ctx), t); err != nil {
		s.log.ErrorContext(ctx, "powercap_save_failed", "task_id", t.ID, "err", err)
	}
	s.m.capTasks.WithLabelValues(t.Type).Inc()
	s.emit(Event{Kind: EventCapDone, ID: t.ID, Status: CapCompleted})
}

// capAll snapshots or patches every component, each on its own goroutine
// (the BMC client bounds the requests).
func (s *Service) capAll(ctx context.Context, kind string, comps []CapComponent) {
	s.checkCapComponents(ctx, comps)
	var wg sync.WaitGroup
	for i := range comps {
		if comps[i].Error != "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.capOne(ctx, kind, &comps[i])
		}()
	}
	wg.Wait()
}

// checkCapComponents marks the components pcs cannot cap.
func (s *Service) checkCapComponents(ctx context.Context, comps []CapComponent) {
	var ids []string
	for i := range comps {
		if !xname.Valid(comps[i].Xname) {
			comps[i].Error = "Invalid xname"
		} else {
			ids = append(ids, comps[i].Xname)
		}
	}
	found, err := s.hsm.QueryComponents(ctx, ids)
	types := map[string]string{}
	roles := map[string]string{}
	for _, c := range found {
		types[c.ID], roles[c.ID] = c.Type, c.Role
	}
	for i := range comps {
		c := &comps[i]
		switch {
		case c.Error != "":
		case err != nil:
			c.Error = "Error retrieving HSM data"
		case types[c.Xname] == "":
			c.Error = "Xname not found in HSM"
		case types[c.Xname] != "Node":
			c.Error, c.unsupported = fmt.Sprintf("Type, %s unsupported for power capping", types[c.Xname]), true
		case roles[c.Xname] == "Management":
			c.Error, c.unsupported = "Power capping Management nodes is not supported", true
		}
	}
	if err := s.targets.refresh(ctx); err != nil {
		s.log.WarnContext(ctx, "hsm_endpoints_unavailable", "err", err)
	}
}

// capOne snapshots or patches one node's power controls.
func (s *Service) capOne(ctx context.Context, kind string, c *CapComponent) {
	tgt, err := s.targets.lookup(ctx, c.Xname)
	if err != nil {
		c.Error = "Missing RfFQDN"
		return
	}
	pw, err := s.readPower(ctx, tgt)
	if err != nil {
		c.Error = err.Error()
		return
	}
	var errs []string
	if kind == CapPatch {
		errs = pw.apply(c.Set)
		if len(errs) < len(c.Set) {
			if _, err := s.bmc.do(ctx, tgt, "PATCH", pw.uri, map[string]any{"PowerControl": pw.raw}); err != nil {
				c.Error = strings.Join(append(errs, err.Error()), "; ")
				return
			}
			if pw, err = s.readPower(ctx, tgt); err != nil {
				c.Error = strings.Join(append(errs, err.Error()), "; ")
				return
			}
		}
	}
	c.Limits, c.Controls = pw.report()
	c.Error = strings.Join(errs, "; ")
}

// expireCaps drops completed power-cap tasks past their expiry.
func (s *Service) expireCaps(ctx context.Context, now time.Time) error {
	var drop []string
	s.caps.mu.Lock()
	for id, t := range s.caps.tasks {
		if t.Status == CapCompleted && now.After(t.Expires) {
			drop = append(drop, id)
		}
	}
	s.caps.mu.Unlock()
	if len(drop) == 0 {
		return nil
	}
	err := s.store.db.WriteTx(ctx, func(tx *sql.Tx) error {
		for _, id := range drop {
			if _, err := tx.ExecContext(ctx, `DELETE FROM powercap_tasks WHERE id = ?`, id); err != nil {
				return fmt.Errorf("delete power-cap task: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.caps.mu.Lock()
	for _, id := range drop {
		delete(s.caps.tasks, id)
	}
	s.caps.mu.Unlock()
	return nil
}
