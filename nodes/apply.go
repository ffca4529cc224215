package nodes

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"

	"github.com/hmsuite/hms/nodes/wire"
)

// Writes are the service writes an apply needs. Changes lists them by
// resource for the plan; the rest is the Backend's own.
type Writes struct {
	Changes map[Key][]wire.ServiceChange
	batch   *batch
}

// Apply plans req against what the daemon owns and, unless req.DryRun,
// carries the plan out. An invalid set is an ErrInvalid error naming the
// resources at fault, and nothing is written. A resource whose writes
// failed carries the error in its Change and is not recorded, so the next
// apply retries it; the others are applied.
func (s *Service) Apply(ctx context.Context, req wire.ApplyRequest) (wire.Plan, error) {
	in, err := normalise(req.Resources)
	if err != nil {
		return wire.Plan{}, err
	}
	return s.locked(ctx, in, req, func(stored *State, rows map[Key]Row, sc *Scope) (wire.Plan, error) {
		return s.applyLocked(ctx, in, req, stored, rows, sc)
	})
}

// locked runs fn holding the keys an apply of in takes (locks.go), with
// the stored state read once they are held. Should the stored state have
// changed meanwhile so that the apply needs more keys, it lets go and
// waits for all of them.
func (s *Service) locked(ctx context.Context, in *set, req wire.ApplyRequest,
	fn func(stored *State, rows map[Key]Row, sc *Scope) (wire.Plan, error)) (wire.Plan, error) {
	keys := map[string]bool{}
	var read *loaded // the state read before locking, reused if still current
	if !req.Prune {
		gen := s.store.Gen()
		stored, rows, err := s.loadState(ctx)
		if err != nil {
			return wire.Plan{}, err
		}
		keys, read = lockKeys(stored, in, req), &loaded{gen, stored, rows}
	}
	for {
		release, err := s.locks.lock(ctx, keys, req.Prune)
		if err != nil {
			return wire.Plan{}, err
		}
		var stored *State
		var rows map[Key]Row
		if read != nil && read.gen == s.store.Gen() {
			stored, rows = read.stored, read.rows
		} else if stored, rows, err = s.loadState(ctx); err != nil {
			release()
			return wire.Plan{}, err
		}
		read = nil
		sc := everything()
		if !req.Prune {
			if want := lockKeys(stored, in, req); !covers(keys, want) {
				release()
				maps.Copy(keys, want)
				continue
			}
			sc = scopeOf(keys)
		}
		defer release()
		return fn(stored, rows, sc)
	}
}

// loaded is a stored state and the store's Gen when it was read.
type loaded struct {
	gen    int64
	stored *State
	rows   map[Key]Row
}

// applyLocked is Apply of a normalised set to stored, holding the keys of
// scope sc.
func (s *Service) applyLocked(ctx context.Context, in *set, req wire.ApplyRequest, stored *State, rows map[Key]Row, sc *Scope) (wire.Plan, error) {
	desired := target(stored, in, req)
	if err := checkRefs(desired); err != nil {
		return wire.Plan{}, err
	}
	v := s.vault()
	if !req.Delete {
		if err := s.checkSecrets(ctx, v, in, desired, req.Secrets); err != nil {
			return wire.Plan{}, err
		}
	}
	plan, keys := resourceChanges(stored, desired, rows, in, req)
	var w *Writes
	if s.backend != nil {
		secrets, err := secrets(ctx, v, desired, req.Secrets)
		if err != nil {
			return wire.Plan{}, err
		}
		if w, err = s.backend.Plan(ctx, desired, union(stored, desired), secrets, sc); err != nil {
			return wire.Plan{}, err
		}
		plan = withServiceChanges(plan, keys, w, desired, rows)
	}
	if req.DryRun {
		return plan, nil
	}
	if len(req.Secrets) > 0 {
		if err := s.sealSecrets(ctx, req.Secrets); err != nil {
			return wire.Plan{}, err
		}
	}
	var failed map[Key]error
	if w != nil {
		failed = s.backend.Apply(ctx, w)
	}
	return s.record(ctx, plan, failed)
}

// target is the owned state req leaves: the stored one with the declared
// resources put, or only them (prune), or without them (delete).
func target(stored *State, in *set, req wire.ApplyRequest) *State {
	declared := &State{Nodes: in.nodes, Profiles: in.profiles, Groups: in.groups}
	switch {
	case req.Delete:
		t := stored.clone()
		for k := range in.nodes {
			delete(t.Nodes, k)
		}
		for k := range in.profiles {
			delete(t.Profiles, k)
		}
		for k := range in.groups {
			delete(t.Groups, k)
		}
		return t
	case req.Prune:
		return declared
	}
	return union(stored, declared)
}

// resourceChanges compares stored and desired resource by resource: every
// declared one, and every one the apply deletes. keys indexes the plan.
func resourceChanges(stored, desired *State, rows map[Key]Row, in *set, req wire.ApplyRequest) (wire.Plan, map[Key]int) {
	plan := wire.Plan{Changes: []wire.Change{}}
	keys := map[Key]int{}
	add := func(c wire.Change) {
		keys[Key{c.Kind, c.Name}] = len(plan.Changes)
		plan.Changes = append(plan.Changes, c)
	}
	if !req.Delete {
		for _, r := range in.order {
			k := Key{r.Kind, r.Name()}
			c := wire.Change{Kind: r.Kind, Name: r.Name(), After: doc(r), Action: wire.ActionCreate}
			if row, ok := rows[k]; ok {
				c.Before, c.Action = row.Doc, wire.ActionUpdate
				if bytes.Equal(row.Doc, c.After) {
					c.Action = wire.ActionUnchanged
				}
			}
			add(c)
		}
	}
	for _, r := range reverse(stored.resources()) {
		if k := (Key{r.Kind, r.Name()}); !desired.has(k) {
			add(wire.Change{Kind: r.Kind, Name: r.Name(), Action: wire.ActionDelete, Before: rows[k].Doc})
		}
	}
	return plan, keys
}

// withServiceChanges attaches the service writes to their resources; a
// resource that did not change but whose services drifted is an update,
// and a stored resource not in the plan that drifted joins it.
func withServiceChanges(plan wire.Plan, keys map[Key]int, w *Writes, desired *State, rows map[Key]Row) wire.Plan {
	for _, r := range desired.resources() {
		k := Key{r.Kind, r.Name()}
		if _, ok := keys[k]; !ok && len(w.Changes[k]) > 0 {
			keys[k] = len(plan.Changes)
			plan.Changes = append(plan.Changes, wire.Change{Kind: k.Kind, Name: k.Name, Action: wire.ActionUnchanged,
				Before: rows[k].Doc, After: doc(r)})
		}
	}
	for k, sc := range w.Changes {
		i, ok := keys[k]
		if !ok {
			continue
		}
		c := &plan.Changes[i]
		c.Services = sc
		if c.Action == wire.ActionUnchanged && len(sc) > 0 {
			c.Action = wire.ActionUpdate
		}
	}
	return plan
}

// record stores the applied resources (not the failed ones) and returns
// the plan with the failures.
func (s *Service) record(ctx context.Context, plan wire.Plan, failed map[Key]error) (wire.Plan, error) {
	now := s.now().UTC()
	var puts, dels []Row
	for i := range plan.Changes {
		c := &plan.Changes[i]
		k := Key{c.Kind, c.Name}
		if err := failed[k]; err != nil {
			c.Error = err.Error()
			continue
		}
		switch c.Action {
		case wire.ActionDelete:
			dels = append(dels, Row{Kind: c.Kind, Name: c.Name})
		case wire.ActionCreate, wire.ActionUpdate:
			if c.After != nil && !bytes.Equal(c.Before, c.After) {
				puts = append(puts, Row{Kind: c.Kind, Name: c.Name, Doc: c.After, Updated: now})
			}
		}
	}
	if err := s.store.Write(ctx, puts, dels); err != nil {
		return plan, err
	}
	plan.Applied = true
	return plan, nil
}

func reverse[T any](s []T) []T {
	out := make([]T, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// compact re-encodes a JSON document without insignificant space.
func compact(b []byte) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}
