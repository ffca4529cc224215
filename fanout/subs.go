package fanout

import (
	"context"
	"slices"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/redact"
)

// errNoMatch is the error of a DELETE that matches no subscription.
var errNoMatch = problem.Invalidf("No matching subscription for DELETE")

// Subscribe stores a new subscription for k. Repeating an identical
// subscription succeeds without change (subscribers re-subscribe after a
// reboot); a different one for the same subscriber and agent is refused (400).
func (s *Service) Subscribe(ctx context.Context, k Key, sub Subscription) error {
	if err := sub.validate(); err != nil {
		return err
	}
	s.mu.RLock()
	id, exists := s.ix.byKey[k]
	var cur Subscription
	if exists {
		cur = s.ix.subs[id].sub
	}
	s.mu.RUnlock()
	if exists {
		if subBody(cur) == subBody(sub) {
			return nil
		}
		// Shipped hmnfd answers any POST for an existing subscriber and
		// agent 400 with this text (not 409), and clients that PATCH after
		// it look for a 400. An identical one succeeds here: it changes
		// nothing, and agents re-subscribe after every reboot.
		return problem.Invalidf("Subscription exists, cannot modify in POST operation")
	}
	id, err := s.store.insertSubscription(ctx, k, sub, s.cfg.Now())
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.bind(s.ix.put(id, k, sub))
	n := len(s.ix.subs)
	s.mu.Unlock()
	s.m.subs.Set(float64(n))
	s.filterChanged()
	s.log.Info("subscription_added", "subscriber", k.String(), "url", redact.URL(sub.Url))
	return nil
}

// Update applies a PATCH to k's subscription. A PATCH of a subscription that
// does not exist changes nothing and is no error: shipped hmnfd answers it
// 200 (v1) or 204 (v2), "ok, or no match", and clients expect that.
// qmu and mu are held from the read of the current subscription to the
// write of the new one, so concurrent PATCHes cannot lose each other's
// changes.
func (s *Service) Update(ctx context.Context, k Key, patch Subscription) error {
	s.qmu.Lock() // see Unsubscribe
	defer s.qmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.ix.byKey[k]
	if !ok {
		s.log.Info("subscription_patch_no_match", "subscriber", k.String())
		return nil
	}
	cur := s.ix.subs[id].sub
	if patch.Url != "" {
		if err := validURL(patch.Url); err != nil {
			return err
		}
	}
	next := cur.merge(patch)
	if err := next.validate(); err != nil {
		return err
	}
	if next.Url != cur.Url && s.ix.urlUses(cur.Url) == 1 && s.ix.urlUses(next.Url) == 0 && s.store.target(cur.Url) != 0 {
		// The subscriber moved: what it has not received yet follows it.
		// (An old URL without a target has no backlog: the update below
		// does, and gives the new URL its target.)
		moved, err := s.store.moveSubscription(ctx, id, next, cur.Url)
		if err != nil {
			return err
		}
		s.bind(s.ix.put(id, k, next))
		s.dropSender(cur.Url)
		if moved > 0 {
			s.senderFor(next.Url).reload(moved)
		}
		s.filterChanged()
		return nil
	}
	// The old URL still serves other subscriptions (its backlog stays with
	// them), or the new one already has its own queue: the backlog of an old
	// URL nothing uses any more is dropped.
	dropOld := ""
	if next.Url != cur.Url && s.ix.urlUses(cur.Url) == 1 {
		dropOld = cur.Url
	}
	if err := s.store.updateSubscription(ctx, id, next, dropOld); err != nil {
		return err
	}
	s.bind(s.ix.put(id, k, next))
	if dropOld != "" {
		s.dropSender(dropOld)
	}
	s.filterChanged()
	return nil
}

// Unsubscribe deletes the subscriptions of component: of one agent, or of
// every agent when all is true. v1 DELETE also names the URL, which must then
// match. The backlog of a URL no subscription uses any more is dropped.
func (s *Service) Unsubscribe(ctx context.Context, k Key, all bool, url string) error {
	// qmu first: an Enqueue that matched the old subscriptions finishes
	// queueing before their backlog goes, instead of queueing after it and
	// bringing a sender for the dropped URL back.
	s.qmu.Lock()
	defer s.qmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []int64
	for id, e := range s.ix.subs {
		if e.key.Component != k.Component || (!all && e.key.Agent != k.Agent) || (url != "" && e.sub.Url != url) {
			continue
		}
		ids = append(ids, id)
	}
	switch {
	case len(ids) == 0 && all:
		return nil // HMS answers 204 for an xname without subscriptions too
	case len(ids) == 0:
		// 400, not 404: the hmnfd API answers "No matching subscription for
		// DELETE" as a bad request.
		return errNoMatch
	}
	return s.deleteLocked(ctx, ids)
}

// deleteLocked removes subscriptions ids; s.mu is held.
func (s *Service) deleteLocked(ctx context.Context, ids []int64) error {
	left := map[string]int{}
	for _, id := range ids {
		u := s.ix.subs[id].sub.Url
		if _, ok := left[u]; !ok {
			left[u] = s.ix.urlUses(u)
		}
		left[u]--
	}
	var orphans []string
	for u, n := range left {
		if n <= 0 {
			orphans = append(orphans, u)
		}
	}
	if err := s.store.deleteSubscriptions(ctx, ids, orphans); err != nil {
		return err
	}
	for _, id := range ids {
		e := s.ix.remove(id)
		s.log.Info("subscription_deleted", "subscriber", e.key.String(), "url", redact.URL(e.sub.Url))
	}
	for _, u := range orphans {
		s.dropSender(u)
	}
	s.m.subs.Set(float64(len(s.ix.subs)))
	s.filterChanged()
	return nil
}

// expire removes every subscription of url and its backlog: the subscriber
// stayed unreachable past the retention limit.
func (s *Service) expire(ctx context.Context, url string) {
	s.smu.Lock()
	snd := s.senders[url]
	s.smu.Unlock()
	backlog := 0
	if snd != nil {
		snd.mu.Lock()
		backlog = snd.backlog
		snd.mu.Unlock()
	}
	s.qmu.Lock() // see Unsubscribe
	defer s.qmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []int64
	for id, e := range s.ix.subs {
		if e.sub.Url == url {
			ids = append(ids, id)
		}
	}
	if err := s.deleteLocked(ctx, ids); err != nil {
		s.log.Error("subscriber_expiry_failed", "subscriber", redact.URL(url), "err", err)
		return
	}
	label := s.m.label(url)
	s.m.expiries.WithLabelValues(label).Inc()
	s.m.expiredSCN.Add(float64(backlog))
	s.log.Warn("subscriber_expired", "subscriber", redact.URL(url), "subscriptions", len(ids), "dropped_scns", backlog,
		"retention_age", s.cfg.RetentionAge, "retention_count", s.cfg.RetentionCount)
}

// List returns the subscriptions, of one component when component is not
// empty, sorted by subscriber.
func (s *Service) List(component string) []Subscription {
	s.mu.RLock()
	out := make([]Subscription, 0, len(s.ix.subs))
	for _, e := range s.ix.subs {
		if component == "" || e.key.Component == component {
			out = append(out, e.sub.withKey(e.key))
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b Subscription) int { return strings.Compare(a.Subscriber, b.Subscriber) })
	return out
}

func (s *Service) filterChanged() {
	select {
	case s.filterCh <- struct{}{}:
	default:
	}
}
