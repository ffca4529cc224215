package fanout

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// Enqueue's path, from SCNs to senders (issue 20: one SCN to 10,000
// subscribers must be queued in under 10 ms). The index hands back each
// matching URL's entry, which carries the URL's sender and so its target
// id: nothing on this path looks a URL up in a map, stores targets or
// creates senders (a subscription brings its target and sender along).

// Enqueue matches scns and durably queues one delivery per matching
// subscriber URL. SCNs with a sequence number already seen for their
// component are dropped as redeliveries. When Enqueue returns nil every
// delivery is committed to the database; it returns how many it queued.
func (s *Service) Enqueue(ctx context.Context, scns []hsm.SCN, source string) (int, error) {
	s.m.received.WithLabelValues(source).Add(float64(len(scns)))
	s.qmu.Lock()
	defer s.qmu.Unlock()
	marks := map[string]seqMark{}
	bodies, queues, err := s.match(scns, marks)
	if err != nil {
		return 0, err
	}
	if len(queues) == 0 && len(marks) == 0 {
		return 0, nil
	}
	if err := s.withSenders(ctx, queues); err != nil {
		return 0, err
	}
	n := setTargets(bodies, queues)
	// Senders get their deliveries as soon as the transaction has begun,
	// while it writes and commits, rather than after: the store has one
	// writer connection, which the transaction holds, so no acknowledgement
	// of them can be written before the rows are; and if the commit fails,
	// the SCNs were not acknowledged to their source, which sends them again
	// (a duplicate delivery, as at-least-once allows). Only deliveries that
	// fit in a sender's memory go early: a spilled sender reads its backlog
	// from the database, so it gets them after the commit.
	var late []int
	handOff := func() {
		late = s.handOff(queues, false)
	}
	if err := s.store.enqueue(ctx, bodies, marks, handOff); err != nil {
		return 0, err
	}
	if len(late) > 0 {
		lq := make([]urlQueue, len(late))
		for i, j := range late {
			lq[i] = queues[j]
		}
		s.handOff(lq, true)
	}
	for c, m := range marks {
		s.marks[c] = m
	}
	return n, nil
}

// withSenders fills in the sender of queues whose URL has none yet. Every
// indexed URL has one (see bind); this is the fallback that keeps Enqueue
// correct should one be missing.
func (s *Service) withSenders(ctx context.Context, queues []urlQueue) error {
	var missing []int
	var urls []string
	for i, q := range queues {
		if q.snd == nil {
			missing, urls = append(missing, i), append(urls, q.url)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	snds, err := s.sendersFor(ctx, urls)
	if err != nil {
		return err
	}
	for k, i := range missing {
		queues[i].snd = snds[k]
	}
	return nil
}

// setTargets sets each body's targets, the target ids of the queues that
// carry it, and returns how many deliveries the queues hold. Body ids are
// consecutive, in the order of bodies.
func setTargets(bodies []scnRow, queues []urlQueue) int {
	if len(bodies) == 0 {
		return 0
	}
	per := make([][]int64, len(bodies))
	if len(bodies) == 1 {
		per[0] = make([]int64, 0, len(queues))
	}
	n, first := 0, bodies[0].id
	for _, q := range queues {
		n += len(q.ps)
		for _, p := range q.ps {
			per[p.id-first] = append(per[p.id-first], q.snd.tid)
		}
	}
	for i := range bodies {
		bodies[i].targets = toRanges(per[i])
	}
	return n
}

// urlQueue is what one Enqueue queues for one subscriber URL, in order.
type urlQueue struct {
	url string
	snd *sender // the URL's sender (nil until withSenders if it had none)
	ps  []pending
}

// match drops redelivered SCNs and matches the rest: it returns the bodies to
// store, each encoded once (one for the whole SCN, one more per distinct
// subset of its components that some subscriber watches), and each matching
// URL's deliveries in order. Called with qmu held; it allocates SCN ids.
func (s *Service) match(scns []hsm.SCN, marks map[string]seqMark) ([]scnRow, []urlQueue, error) {
	now := s.cfg.Now().UnixNano()
	var bodies []scnRow
	var queues []urlQueue
	s.enqEpoch++
	for i := range scns {
		scn := s.fresh(scns[i], marks)
		if scn == nil {
			continue
		}
		s.mu.RLock()
		matched := s.ix.match(scn)
		s.mu.RUnlock()
		if len(matched) == 0 {
			continue
		}
		if queues == nil {
			queues = make([]urlQueue, 0, len(matched))
		}
		slab := make([]pending, len(matched)) // every URL's first entry, in one allocation
		bs := scnBodies{scn: scn, now: now}
		for _, m := range matched {
			p, err := bs.get(s, m.comps, &bodies)
			if err != nil {
				return nil, nil, err
			}
			// ref's scratch fields gather a URL matched by several SCNs of
			// this call into one queue without a map keyed by URL.
			if ref := m.ref; ref.enq == s.enqEpoch {
				queues[ref.qslot].ps = append(queues[ref.qslot].ps, p)
				continue
			}
			m.ref.enq, m.ref.qslot = s.enqEpoch, len(queues)
			slab[0] = p
			queues = append(queues, urlQueue{url: m.ref.url, snd: m.ref.snd, ps: slab[:1:1]})
			slab = slab[1:]
		}
	}
	return bodies, queues, nil
}

// scnBodies encodes one SCN's bodies as match needs them: one for the
// whole SCN, one per distinct subset of its components.
type scnBodies struct {
	scn     *hsm.SCN
	now     int64
	whole   *pending
	subsets map[string]pending // components joined -> the body for them
}

// get returns the pending entry for comps, encoding and numbering a new
// body (appended to bodies) the first time; s.qmu is held.
func (bs *scnBodies) get(s *Service, comps []string, bodies *[]scnRow) (pending, error) {
	whole := len(comps) == len(bs.scn.Components)
	key := ""
	switch {
	case whole && bs.whole != nil:
		return *bs.whole, nil
	case !whole:
		key = strings.Join(comps, ",")
		if p, ok := bs.subsets[key]; ok {
			return p, nil
		}
	}
	out := *bs.scn
	out.Components = comps
	payload, err := json.Marshal(out)
	if err != nil {
		return pending{}, fmt.Errorf("encode SCN: %w", err)
	}
	s.nextID++
	p := pending{id: s.nextID, scn: &out, payload: payload, enqueued: bs.now}
	*bodies = append(*bodies, scnRow{id: p.id, body: payload, enqueued: bs.now})
	if whole {
		bs.whole = &p
	} else {
		if bs.subsets == nil {
			bs.subsets = map[string]pending{}
		}
		bs.subsets[key] = p
	}
	return p, nil
}

// fresh returns scn without the components whose sequence number was already
// seen, recording the new marks in marks; nil if nothing is left. SCNs without
// a sequence number (HSM callbacks of a shipped HSM) are always fresh. What
// counts as newer is seqMark.newer: (Epoch, Seq) when the SCNs carry HSM's
// database epoch, so a reset HSM database neither silences its components
// nor lets a replay of the old one's SCNs through.
func (s *Service) fresh(scn hsm.SCN, marks map[string]seqMark) *hsm.SCN {
	if scn.Timestamp.IsZero() {
		scn.Timestamp = s.cfg.Now().UTC()
	}
	if scn.Seq <= 0 {
		return &scn
	}
	ts := scn.Timestamp.UnixNano()
	keep := scn.Components[:0:0]
	for _, c := range scn.Components {
		m, ok := marks[c]
		if !ok {
			m, ok = s.marks[c]
		}
		if ok && !m.newer(scn.Epoch, scn.Seq, ts) {
			s.m.duplicates.Inc()
			continue
		}
		marks[c] = seqMark{epoch: scn.Epoch, seq: scn.Seq, ts: ts}
		keep = append(keep, c)
	}
	if len(keep) == 0 {
		return nil
	}
	scn.Components = keep
	return &scn
}

// handOffChunk is how many senders handOff wakes at a time: the workers
// start on the first ones while it pushes to the rest.
const handOffChunk = 256

// handOff pushes each queue to its sender and wakes the senders, in target
// order (the acknowledgements then come back in runs of target ids, which
// the acks rows store as ranges); it returns the indexes of the queues a
// sender refused before the commit (see sender.push).
func (s *Service) handOff(queues []urlQueue, committed bool) (late []int) {
	var order []int // nil: queues are in target order already (the usual case)
	if !slices.IsSortedFunc(queues, func(a, b urlQueue) int { return cmp.Compare(a.snd.tid, b.snd.tid) }) {
		order = make([]int, len(queues))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(queues[a].snd.tid, queues[b].snd.tid) })
	}
	woken := make([]*sender, 0, min(len(queues), handOffChunk))
	for k := range queues {
		i := k
		if order != nil {
			i = order[k]
		}
		wake, pushed := queues[i].snd.push(queues[i].ps, committed)
		if !pushed {
			late = append(late, i)
		} else if wake {
			woken = append(woken, queues[i].snd)
		}
		if len(woken) == handOffChunk {
			s.sched.addAll(woken)
			woken = woken[:0]
		}
	}
	s.sched.addAll(woken)
	return late
}
