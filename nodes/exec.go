package nodes

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/layout/sls"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// componentChunk is how many components one bulk POST carries.
const componentChunk = 2000

// failures collects the first error of each resource.
type failures struct {
	mu  sync.Mutex
	err map[Key]error
}

func (f *failures) add(err error, owners ...Key) {
	if err == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range owners {
		if f.err[k] == nil {
			f.err[k] = err
		}
	}
}

// each runs fn on 0..n-1 with at most workers in flight, and waits.
func each(ctx context.Context, n, workers int, fn func(i int)) {
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i := 0; i < n && ctx.Err() == nil; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

// bulkChunk is how many objects one bulk request carries.
const bulkChunk = 500

// inBulk sends items in bulk requests of bulkChunk objects, one after the
// other (each is one transaction of its service). A chunk its bulk request
// failed is sent again one object at a time, workers at once, with one,
// which reports each object's own error: a service without the suite's
// bulk extension (a shipped SLS or HSM) costs one refused request per
// chunk, and one bad object does not fail its chunk.
func inBulk[T any](ctx context.Context, workers int, items []T, bulk func(context.Context, []T) error, one func(T)) {
	for lo := 0; lo < len(items) && ctx.Err() == nil; lo += bulkChunk {
		chunk := items[lo:min(lo+bulkChunk, len(items))]
		if bulk(ctx, chunk) == nil {
			continue
		}
		each(ctx, len(chunk), workers, func(i int) { one(chunk[i]) })
	}
}

func mapped[T, U any](in []T, fn func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = fn(v)
	}
	return out
}

// gone treats a delete of what is already gone as done.
func gone(err error) error {
	if errors.Is(err, problem.ErrNotFound) {
		return nil
	}
	return err
}

// Apply carries the writes out: deletes first (from the boot parameters
// down to the hardware), then creates and updates (from the hardware up).
// Each failure is reported on its resources; the other writes go on.
func (s *Services) Apply(ctx context.Context, w *Writes) map[Key]error {
	b, f := w.batch, &failures{err: map[Key]error{}}
	if b == nil {
		return nil
	}
	s.deletes(ctx, b, f)
	s.puts(ctx, b, f)
	if err := ctx.Err(); err != nil {
		for k := range w.Changes {
			f.add(err, k)
		}
	}
	return f.err
}

func (s *Services) deletes(ctx context.Context, b *batch, f *failures) {
	for _, d := range b.bssDelete {
		f.add(gone(s.bss.DeleteBootParams(ctx, d.bp)), d.owners...)
	}
	each(ctx, len(b.groupDelete), s.workers, func(i int) {
		f.add(gone(s.hsm.DeleteGroup(ctx, b.groupDelete[i].name)), b.groupDelete[i].owner)
	})
	each(ctx, len(b.memberRemove), s.workers, func(i int) {
		m := b.memberRemove[i]
		f.add(gone(s.hsm.RemoveGroupMember(ctx, m.label, m.id)), m.owner)
	})
	for _, list := range []struct {
		ops []ownedName
		del func(context.Context, string) error
	}{{b.rfeDelete, s.hsm.DeleteRedfishEndpoint}, {b.ethDelete, s.hsm.DeleteEthernetInterface},
		{b.compDelete, s.hsm.DeleteComponent}, {b.slsDelete, s.sls.DeleteHardware}} {
		each(ctx, len(list.ops), s.workers, func(i int) {
			f.add(gone(list.del(ctx, list.ops[i].name)), list.ops[i].owner)
		})
	}
}

func (s *Services) puts(ctx context.Context, b *batch, f *failures) {
	// SLS's hardware and HSM's components and interfaces do not depend on
	// each other: the two services are written at once.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, level := range b.slsPut {
			inBulk(ctx, s.workers, level, func(ctx context.Context, hws []ownedHW) error {
				return s.sls.PutHardwareAll(ctx, mapped(hws, func(h ownedHW) sls.Hardware { return h.hw }))
			}, func(h ownedHW) {
				_, err := s.sls.PutHardware(ctx, h.hw)
				f.add(err, h.owner)
			})
		}
	}()
	s.components(ctx, b, f)
	inBulk(ctx, s.workers, b.ethCreate, func(ctx context.Context, es []ownedEth) error {
		return s.hsm.CreateEthernetInterfaces(ctx, mapped(es, func(e ownedEth) hsm.EthernetInterface { return e.eth }))
	}, func(e ownedEth) {
		f.add(s.createEth(ctx, e.eth), e.owner)
	})
	each(ctx, len(b.ethPatch), s.workers, func(i int) {
		e := b.ethPatch[i].eth
		_, err := s.hsm.PatchEthernetInterface(ctx, e.ID, hsm.EthernetPatch{ComponentID: &e.ComponentID, IPAddresses: &e.IPAddresses})
		f.add(err, b.ethPatch[i].owner)
	})
	wg.Wait() // the endpoints' discovery and BSS read the layout
	each(ctx, len(b.rfeCreate), s.workers, func(i int) {
		f.add(s.hsm.CreateRedfishEndpoints(ctx, b.rfeCreate[i].rfe), b.rfeCreate[i].owner)
	})
	each(ctx, len(b.rfePatch), s.workers, func(i int) {
		e := b.rfePatch[i].rfe
		_, err := s.hsm.PatchRedfishEndpoint(ctx, e.ID, hsm.RedfishEndpointPatch{Hostname: &e.Hostname, FQDN: &e.FQDN,
			IPAddress: &e.IPAddress, MACAddr: &e.MACAddr, User: &e.User, Password: &e.Password})
		f.add(err, b.rfePatch[i].owner)
	})
	each(ctx, len(b.groupCreate), s.workers, func(i int) {
		f.add(s.hsm.CreateGroup(ctx, b.groupCreate[i].group), b.groupCreate[i].owner)
	})
	each(ctx, len(b.groupPatch), s.workers, func(i int) {
		g := b.groupPatch[i].group
		f.add(s.hsm.PatchGroup(ctx, g.Label, hsm.GroupPatch{Description: &g.Description}), b.groupPatch[i].owner)
	})
	each(ctx, len(b.memberAdd), s.workers, func(i int) {
		m := b.memberAdd[i]
		f.add(s.hsm.AddGroupMember(ctx, m.label, m.id), m.owner)
	})
	each(ctx, len(b.bssPut), s.workers, func(i int) {
		f.add(s.bss.PutBootParams(ctx, b.bssPut[i].bp), b.bssPut[i].owners...)
	})
}

// createEth creates ei. A conflict is no failure when HSM holds the
// interface as ei has it (its component and addresses, what a plan
// compares): inBulk's replay of a bulk request that committed but whose
// answer was lost finds its own writes there.
func (s *Services) createEth(ctx context.Context, ei hsm.EthernetInterface) error {
	err := s.hsm.CreateEthernetInterface(ctx, ei)
	if !errors.Is(err, problem.ErrConflict) {
		return err
	}
	cur, gerr := s.hsm.EthernetInterface(ctx, ei.ID)
	if gerr != nil || !strings.EqualFold(cur.ComponentID, ei.ComponentID) || !sameIPs(cur.IPAddresses, ei.IPAddresses) {
		return err
	}
	return nil
}

// components creates components in bulk POSTs, then sets roles (one bulk
// PATCH per role) and arches.
func (s *Services) components(ctx context.Context, b *batch, f *failures) {
	for lo := 0; lo < len(b.compCreate); lo += componentChunk {
		chunk := b.compCreate[lo:min(lo+componentChunk, len(b.compCreate))]
		comps := make([]hsm.Component, len(chunk))
		owners := make([]Key, len(chunk))
		for i, c := range chunk {
			comps[i], owners[i] = c.comp, c.owner
		}
		f.add(s.hsm.PostComponents(ctx, comps, false), owners...)
	}
	type role struct{ role, sub string }
	byRole := map[role][]ownedComp{}
	var roles []role
	for _, c := range b.compRole {
		r := role{c.comp.Role, c.comp.SubRole}
		if byRole[r] == nil {
			roles = append(roles, r)
		}
		byRole[r] = append(byRole[r], c)
	}
	for _, r := range roles {
		var ids []string
		var owners []Key
		for _, c := range byRole[r] {
			ids, owners = append(ids, c.comp.ID), append(owners, c.owner)
		}
		f.add(s.hsm.BulkRole(ctx, ids, r.role, r.sub), owners...)
	}
	each(ctx, len(b.compForce), s.workers, func(i int) {
		f.add(s.hsm.PutComponent(ctx, b.compForce[i].comp, true), b.compForce[i].owner)
	})
}
