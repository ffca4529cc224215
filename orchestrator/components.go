package orchestrator

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
)

// ComponentFilter selects components (GET /v2/components); empty fields
// select everything.
type ComponentFilter struct {
	IDs           map[string]bool
	Session       string
	StagedSession string
	Enabled       *bool
	Phase         *string
	Status        string
	StartAfter    string
	PageSize      int
}

func (f ComponentFilter) match(c *Component) bool {
	return (f.IDs == nil || f.IDs[c.ID]) && (f.Session == "" || c.Session == f.Session) &&
		(f.StagedSession == "" || c.StagedState.Session == f.StagedSession) &&
		(f.Enabled == nil || c.Enabled == *f.Enabled) && (f.Phase == nil || c.Status.Phase == *f.Phase) &&
		(f.Status == "" || c.Status.Status == f.Status) && (f.StartAfter == "" || c.ID > f.StartAfter)
}

// Components returns copies of the components f selects, by ID.
func (s *Service) Components(f ComponentFilter) []Component {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Component{}
	for _, c := range s.comps {
		if f.match(c) {
			out = append(out, *c)
		}
	}
	slices.SortFunc(out, func(a, b Component) int { return strings.Compare(a.ID, b.ID) })
	if f.PageSize > 0 && len(out) > f.PageSize {
		out = out[:f.PageSize]
	}
	return out
}

// Component returns one component (ErrNotFound).
func (s *Service) Component(id string) (Component, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.comps[id]
	if !ok {
		return Component{}, problem.NotFoundf("Component %s could not be found", id)
	}
	return *c, nil
}

// newComponent is a component BOS has taken no action on.
func newComponent(id string) Component {
	return Component{ID: id, Status: ComponentStatus{Status: StatusStable}}
}

// autoFields stamps the states the update touched and derives the status,
// as BOS does on every write.
func (s *Service) autoFields(c *Component, touched map[string]any) {
	now := stamp(s.now())
	for k, p := range map[string]*string{"actual_state": &c.ActualState.LastUpdated,
		"desired_state": &c.DesiredState.LastUpdated, "staged_state": &c.StagedState.LastUpdated,
		"last_action": &c.LastAction.LastUpdated} {
		if _, ok := touched[k]; ok || touched == nil {
			*p = now
		}
	}
	c.computeStatus()
}

// PutComponents creates or replaces components whole.
func (s *Service) PutComponents(ctx context.Context, raw []json.RawMessage) ([]Component, error) {
	comps := make([]Component, len(raw))
	for i, r := range raw {
		var touched map[string]any
		_ = json.Unmarshal(r, &touched)
		comps[i] = newComponent("")
		if err := decodeStrict(r, &comps[i]); err != nil {
			return nil, err
		}
		if comps[i].ID == "" {
			return nil, problem.Invalidf("component %d: id is required", i)
		}
		s.autoFields(&comps[i], touched)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.save(ctx, comps); err != nil {
		return nil, err
	}
	return comps, nil
}

// PatchComponent merges patch into one component. Setting actual_state
// while bos powers the node off is refused (409), as in BOS: the node's
// report is stale then.
func (s *Service) PatchComponent(ctx context.Context, id string, patch []byte) (Component, error) {
	out, err := s.patch(ctx, []string{id}, patch, false, true)
	if err != nil {
		return Component{}, err
	}
	return out[0], nil
}

func (s *Service) patch(ctx context.Context, ids []string, patch []byte, skipBad, guardActual bool) ([]Component, error) {
	var touched map[string]any
	if err := json.Unmarshal(patch, &touched); err != nil || touched == nil {
		return nil, problem.Invalidf("request body: a JSON object expected")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Component
	for _, id := range ids {
		cur, ok := s.comps[id]
		if !ok {
			if skipBad {
				continue
			}
			return nil, problem.NotFoundf("Component %s could not be found", id)
		}
		if _, ok := touched["actual_state"]; ok && guardActual && cur.Status.Phase == PhasePoweringOff {
			return nil, problem.Conflictf("BOS is currently changing the state of the node, so the actual state can not be updated at this time")
		}
		var next Component
		if err := mergePatch(cur, patch, &next); err != nil {
			return nil, err
		}
		next.ID = id
		if _, ok := touched["actual_state"]; ok {
			tokenArtifacts(&next)
		}
		s.autoFields(&next, touched)
		out = append(out, next)
	}
	if err := s.save(ctx, out); err != nil {
		return nil, err
	}
	if out == nil {
		out = []Component{}
	}
	return out, nil
}

// tokenArtifacts completes a node's report of its actual state (package
// report: kernel parameters and referral token, all /proc/cmdline holds):
// a token that is the one BSS issued for the desired artifacts names them,
// so they become the actual kernel and initrd.
func tokenArtifacts(c *Component) {
	a, d := &c.ActualState, c.DesiredState
	if a.BSSToken != "" && a.BSSToken == d.BSSToken && a.BootArtifacts.Kernel == "" && a.BootArtifacts.Initrd == "" {
		a.BootArtifacts.Kernel, a.BootArtifacts.Initrd = d.BootArtifacts.Kernel, d.BootArtifacts.Initrd
	}
}

// componentsUpdate is the filtered form of PATCH /v2/components.
type componentsUpdate struct {
	Patch   json.RawMessage `json:"patch"`
	Filters struct {
		IDs     *string `json:"ids"`
		Session *string `json:"session"`
	} `json:"filters"`
}

// PatchComponents is PATCH /v2/components: an array of components (each
// with its id), or {patch, filters} by ids or by session.
func (s *Service) PatchComponents(ctx context.Context, body []byte, skipBad bool) ([]Component, error) {
	trimmed := strings.TrimSpace(string(body))
	if strings.HasPrefix(trimmed, "[") {
		var list []json.RawMessage
		if err := decodeStrict(body, &list); err != nil {
			return nil, err
		}
		out := []Component{}
		for i, r := range list {
			var idOnly struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(r, &idOnly); err != nil || idOnly.ID == "" {
				return nil, problem.Invalidf("component %d: id is required", i)
			}
			got, err := s.patch(ctx, []string{idOnly.ID}, r, skipBad, false)
			if err != nil {
				return nil, err
			}
			out = append(out, got...)
		}
		return out, nil
	}
	var u componentsUpdate
	if err := decodeStrict(body, &u); err != nil {
		return nil, err
	}
	if len(u.Patch) == 0 {
		return nil, problem.Invalidf("patch is required")
	}
	ids, err := s.filterIDs(u.Filters.IDs, u.Filters.Session)
	if err != nil {
		return nil, err
	}
	return s.patch(ctx, ids, u.Patch, skipBad, false)
}

func (s *Service) filterIDs(ids, session *string) ([]string, error) {
	switch {
	case ids != nil && *ids != "" && (session == nil || *session == ""):
		return strings.Split(*ids, ","), nil
	case session != nil && *session != "" && (ids == nil || *ids == ""):
		var out []string
		for _, c := range s.Components(ComponentFilter{Session: *session}) {
			out = append(out, c.ID)
		}
		return out, nil
	}
	return nil, problem.Invalidf("filters: exactly one of ids and session is required")
}

// DeleteComponent removes a component (ErrNotFound).
func (s *Service) DeleteComponent(ctx context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.comps[id]; !ok {
		return problem.NotFoundf("Component %s could not be found", id)
	}
	if err := s.store.SaveComponents(ctx, nil, []string{id}); err != nil {
		return err
	}
	delete(s.comps, id)
	return nil
}

// save writes comps (s.mu held) at the versions memory holds (an ID given
// twice is written twice, the last one winning), then keeps them in memory.
func (s *Service) save(ctx context.Context, comps []Component) error {
	if len(comps) == 0 {
		return nil
	}
	next := map[string]int64{}
	for i := range comps {
		v, ok := next[comps[i].ID]
		if !ok {
			if cur := s.comps[comps[i].ID]; cur != nil {
				v = cur.version
			}
		}
		comps[i].version, next[comps[i].ID] = v, v+1
	}
	if err := s.store.SaveComponents(ctx, comps, nil); err != nil {
		return err
	}
	for i := range comps {
		c := comps[i]
		s.comps[c.ID] = &c
	}
	return nil
}

// guard is what an operator read before it acted (peers answered, PCS was
// called): the version of each component then, and what must still hold
// of one that a PATCH wrote since for the operator's change to apply. A
// component that fails it is left as the PATCH made it; the next pass
// decides again from what it then reads.
type guard struct {
	seen  map[string]int64
	still func(c *Component) bool
}

func (g *guard) allows(c *Component) bool {
	if g == nil {
		return true
	}
	if v, ok := g.seen[c.ID]; ok && v == c.version {
		return true
	}
	return g.still != nil && g.still(c)
}

// update applies fn to the components named (skipping unknown ones) and
// writes those fn reports changed; the operators' one way to write. With a
// guard, components written since the operator read them are skipped
// unless the guard still allows them.
func (s *Service) update(ctx context.Context, ids []string, g *guard, fn func(c *Component) bool) error {
	return s.write(ctx, ids, false, g, fn)
}

// upsert is update that first creates the components not yet known.
func (s *Service) upsert(ctx context.Context, ids []string, fn func(c *Component) bool) error {
	return s.write(ctx, ids, true, nil, fn)
}

func (s *Service) write(ctx context.Context, ids []string, create bool, g *guard, fn func(c *Component) bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var changed []Component
	skipped := 0
	for _, id := range ids {
		cur, ok := s.comps[id]
		if !ok && !create {
			continue
		}
		if ok && !g.allows(cur) {
			skipped++
			continue
		}
		if !ok {
			n := newComponent(id)
			cur = &n
		}
		next := *cur
		if fn(&next) || !ok {
			next.computeStatus()
			changed = append(changed, next)
		}
	}
	if skipped > 0 {
		s.log.Debug("component_write_conflict", "skipped", skipped)
		s.Wake() // decide again, from a fresh reading, soon
	}
	return s.save(ctx, changed)
}
