package fanout

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/hmsuite/hms/internal/sqldb"
)

// The durable queue (issue 20). A queued SCN is one scns row (the body)
// plus its targets as ranges of target ids (scn_targets), so queueing one
// SCN for 10,000 subscribers writes a couple of rows rather than 10,000.
// What has been delivered is recorded per acknowledgement batch: one acks
// row per SCN still owed to someone, naming the targets that have it; once
// every target has an SCN, its rows are deleted. targets.acked is a
// per-target cursor for the rare bulk case (a subscriber's backlog is
// dropped): every SCN up to it counts as delivered to that target.
//
// The store keeps the same state in memory (live), so that acknowledging,
// counting backlogs and deciding which SCNs are done need no queries; it is
// rebuilt from the tables on open. lmu guards it and is held across the
// transaction that changes the tables, so memory and database move
// together; it is never taken inside a write transaction (a sender handed
// its deliveries from inside Enqueue's transaction must not wait for it).

// liveSCN is a queued SCN as the store keeps it in memory.
type liveSCN struct {
	targets []rng    // whom it goes to
	offs    []int    // offs[i] is the place of targets[i].lo among all targets; nil until indexed
	acked   []uint64 // a bit per target, by place: it has the SCN (acks rows); nil if none has
	pending int      // targets still owed it
}

// newLive is a queued SCN going to targets, owed to all of them.
func newLive(targets []rng) *liveSCN {
	l := &liveSCN{targets: targets}
	l.index()
	l.pending = l.size()
	return l
}

// index numbers the targets (see offs), once they are all known.
func (l *liveSCN) index() {
	l.offs = make([]int, len(l.targets))
	n := 0
	for i, r := range l.targets {
		l.offs[i] = n
		n += int(r.hi - r.lo + 1)
	}
}

// size is the number of targets.
func (l *liveSCN) size() int {
	if len(l.targets) == 0 {
		return 0
	}
	last := l.targets[len(l.targets)-1]
	return l.offs[len(l.offs)-1] + int(last.hi-last.lo+1)
}

// place is target t's place among the SCN's targets; false if t is not one.
// A bit per place, rather than a set of target ids, records who has it:
// acknowledging 10,000 deliveries of one SCN filled a map of 10,000
// entries before (issue 20).
func (l *liveSCN) place(t int64) (int, bool) {
	i, found := findRange(l.targets, t)
	if !found {
		return 0, false
	}
	return l.offs[i] + int(t-l.targets[i].lo), true
}

// hasAt reports whether the target at place p has the SCN (per the acks rows).
func (l *liveSCN) hasAt(p int) bool {
	return p/64 < len(l.acked) && l.acked[p/64]&(1<<(p%64)) != 0
}

// give records that target t, one of the SCN's, has it.
func (l *liveSCN) give(t int64) {
	p, ok := l.place(t)
	if !ok {
		return
	}
	if l.acked == nil {
		l.acked = make([]uint64, (l.size()+63)/64)
	}
	l.acked[p/64] |= 1 << (p % 64)
}

// owes reports whether SCN id, l, is still owed to target t; lmu is held.
func (s *Store) owes(l *liveSCN, id, t int64) bool {
	if p, ok := l.place(t); !ok || l.hasAt(p) {
		return false
	}
	c, known := s.cursors[t]
	return known && c < id
}

// count is the number of targets owed SCN id, l; lmu is held.
func (s *Store) count(l *liveSCN, id int64) int {
	n := 0
	for _, r := range l.targets {
		for t := r.lo; t <= r.hi; t++ {
			if s.owes(l, id, t) {
				n++
			}
		}
	}
	return n
}

// enqueue stores SCN bodies, their targets and sequence marks in one
// transaction; when it returns nil the SCNs are durable. begun, if not nil,
// is called once, as soon as the transaction holds the database's only
// writer connection (see Service.Enqueue).
func (s *Store) enqueue(ctx context.Context, bodies []scnRow, marks map[string]seqMark, begun func()) error {
	// In memory first: a delivery handed off from inside the transaction
	// may be acknowledged as soon as it commits.
	s.lmu.Lock()
	for _, b := range bodies {
		// Every target is owed a new SCN: its targets are known, and no
		// cursor reaches an id not allocated yet.
		s.live[b.id] = newLive(b.targets)
		s.maxSCN = max(s.maxSCN, b.id)
	}
	s.lmu.Unlock()
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		if begun != nil {
			begun()
			begun = nil // WriteTx may run the transaction again
		}
		// One goroutine less per statement (see ack).
		return s.insertSCNs(context.WithoutCancel(ctx), tx, bodies, marks)
	})
	if err != nil {
		s.lmu.Lock()
		for _, b := range bodies {
			delete(s.live, b.id)
		}
		s.lmu.Unlock()
		return fmt.Errorf("queue %d SCNs: %w", len(bodies), err)
	}
	return nil
}

func (s *Store) insertSCNs(ctx context.Context, tx *sql.Tx, bodies []scnRow, marks map[string]seqMark) error {
	args := make([]any, 0, 3*maxChunk)
	err := sqldb.Chunks(len(bodies), maxChunk, func(lo, hi int) error {
		args = args[:0]
		for _, b := range bodies[lo:hi] {
			args = append(args, b.id, b.body, b.enqueued)
		}
		return s.exec(ctx, tx, `INSERT INTO scns (id, body, enqueued_at) VALUES `+sqldb.Placeholders(hi-lo, 3), args)
	})
	if err != nil {
		return err
	}
	var ranges []any
	for _, b := range bodies {
		for _, r := range b.targets {
			ranges = append(ranges, b.id, r.lo, r.hi)
		}
	}
	err = sqldb.Chunks(len(ranges)/3, maxChunk, func(lo, hi int) error {
		return s.exec(ctx, tx, `INSERT INTO scn_targets (scn, lo, hi) VALUES `+sqldb.Placeholders(hi-lo, 3), ranges[3*lo:3*hi])
	})
	if err != nil {
		return err
	}
	for comp, m := range marks {
		err := s.exec(ctx, tx, `INSERT INTO intake_seq (component, seq, ts, epoch) VALUES (?, ?, ?, ?)
			ON CONFLICT (component) DO UPDATE SET seq = excluded.seq, ts = excluded.ts, epoch = excluded.epoch`,
			[]any{comp, m.seq, m.ts, m.epoch})
		if err != nil {
			return err
		}
	}
	return nil
}

// exec runs query in tx as a prepared statement kept for the next transaction.
func (s *Store) exec(ctx context.Context, tx *sql.Tx, query string, args []any) error {
	st, err := s.db.Stmt(ctx, tx, query)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(ctx, args...)
	return err
}

// maxChunk is the most rows one multi-row statement carries.
const maxChunk = 256

// ackStep is what one acknowledgement batch changes for one SCN.
type ackStep struct {
	id      int64
	targets []int64 // that have it now, sorted
	done    bool    // nobody else is owed it: delete it
}

// ack records delivered (or dead-lettered) keys: one acks row per SCN, and
// the SCNs nobody is owed any more are deleted.
func (s *Store) ack(ctx context.Context, keys []qkey) error {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	steps := s.planAcks(keys)
	if len(steps) == 0 {
		return nil
	}
	// modernc.org/sqlite starts a goroutine per statement to watch a
	// cancellable context; the transaction keeps ctx.
	rowCtx := context.WithoutCancel(ctx)
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		var done []int64
		for _, st := range steps {
			if st.done {
				done = append(done, st.id)
				continue
			}
			err := s.exec(rowCtx, tx, `INSERT INTO acks (scn, targets) VALUES (?, ?)`,
				[]any{st.id, encodeRanges(toRanges(st.targets))})
			if err != nil {
				return err
			}
		}
		return s.deleteSCNs(rowCtx, tx, done)
	})
	if err != nil {
		return fmt.Errorf("record %d deliveries: %w", len(keys), err)
	}
	for _, st := range steps {
		l := s.live[st.id]
		if st.done {
			delete(s.live, st.id)
			continue
		}
		l.pending -= len(st.targets)
		for _, t := range st.targets {
			l.give(t)
		}
	}
	return nil
}

// planAcks groups keys by SCN, leaving out what is already recorded; lmu is held.
func (s *Store) planAcks(keys []qkey) []ackStep {
	slices.SortFunc(keys, func(a, b qkey) int { return cmp.Or(cmp.Compare(a.scn, b.scn), cmp.Compare(a.target, b.target)) })
	var steps []ackStep
	for i := 0; i < len(keys); {
		j, id := i, keys[i].scn
		for j < len(keys) && keys[j].scn == id {
			j++
		}
		if l := s.live[id]; l != nil {
			var ts []int64
			for _, k := range keys[i:j] {
				if (len(ts) == 0 || ts[len(ts)-1] != k.target) && s.owes(l, id, k.target) {
					ts = append(ts, k.target)
				}
			}
			if len(ts) > 0 {
				steps = append(steps, ackStep{id: id, targets: ts, done: len(ts) >= l.pending})
			}
		}
		i = j
	}
	return steps
}

// deleteSCNs deletes SCNs ids with their targets and acknowledgements.
func (s *Store) deleteSCNs(ctx context.Context, tx *sql.Tx, ids []int64) error {
	args := make([]any, 0, maxChunk)
	return sqldb.Chunks(len(ids), maxChunk, func(lo, hi int) error {
		args = args[:0]
		for _, id := range ids[lo:hi] {
			args = append(args, id)
		}
		in := sqldb.Placeholders(hi-lo, 1)
		for _, q := range []string{`DELETE FROM scns WHERE id IN (` + in + `)`,
			`DELETE FROM scn_targets WHERE scn IN (` + in + `)`, `DELETE FROM acks WHERE scn IN (` + in + `)`} {
			if err := s.exec(ctx, tx, q, args); err != nil {
				return err
			}
		}
		return nil
	})
}

// dropStep is what dropping the backlogs of some targets changes.
type dropStep struct {
	targets []int64
	cursor  int64         // their new targets.acked: every SCN queued so far
	dec     map[int64]int // SCN id -> targets no longer owed it
	done    []int64       // SCNs nobody is owed any more
}

// planDrop works out dropping the backlogs of urls; lmu is held.
func (s *Store) planDrop(urls []string) dropStep {
	st := dropStep{cursor: s.maxSCN, dec: map[int64]int{}}
	for _, u := range urls {
		if t := s.target(u); t != 0 {
			st.targets = append(st.targets, t)
		}
	}
	if len(st.targets) == 0 {
		return st
	}
	for id, l := range s.live {
		for _, t := range st.targets {
			if s.owes(l, id, t) {
				st.dec[id]++
			}
		}
		if n := st.dec[id]; n > 0 && n >= l.pending {
			st.done = append(st.done, id)
		}
	}
	return st
}

// execDrop writes st in tx.
func (s *Store) execDrop(ctx context.Context, tx *sql.Tx, st dropStep) error {
	for _, t := range st.targets {
		if _, err := tx.ExecContext(ctx, `UPDATE targets SET acked = ? WHERE id = ?`, st.cursor, t); err != nil {
			return err
		}
	}
	return s.deleteSCNs(ctx, tx, st.done)
}

// applyDrop records st, written, in memory; lmu is held.
func (s *Store) applyDrop(st dropStep) {
	for _, t := range st.targets {
		s.cursors[t] = st.cursor
	}
	for id, n := range st.dec {
		s.live[id].pending -= n
	}
	for _, id := range st.done {
		delete(s.live, id)
	}
}

// loadQueue reads target's backlog after SCN id after, in order: up to limit
// SCNs are read, of which those the target already has are left out. last
// is the id of the last SCN read and more whether the limit was reached.
func (s *Store) loadQueue(ctx context.Context, target, after int64, limit int) (out []scnRow, last int64, more bool, err error) {
	s.lmu.Lock()
	after = max(after, s.cursors[target])
	s.lmu.Unlock()
	rows, err := s.db.R.QueryContext(ctx, `SELECT s.id, s.body, s.enqueued_at FROM scn_targets r JOIN scns s ON s.id = r.scn
		WHERE r.scn > ? AND r.lo <= ? AND r.hi >= ? ORDER BY r.scn LIMIT ?`, after, target, target, limit)
	if err != nil {
		return nil, 0, false, fmt.Errorf("load backlog of target %d: %w", target, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var r scnRow
		if err := rows.Scan(&r.id, &r.body, &r.enqueued); err != nil {
			return nil, 0, false, fmt.Errorf("load backlog of target %d: %w", target, err)
		}
		out = append(out, r)
		n, last = n+1, r.id
	}
	if err := rows.Err(); err != nil {
		return nil, 0, false, fmt.Errorf("load backlog of target %d: %w", target, err)
	}
	s.lmu.Lock()
	defer s.lmu.Unlock()
	out = slices.DeleteFunc(out, func(r scnRow) bool {
		l := s.live[r.id]
		return l == nil || !s.owes(l, r.id, target)
	})
	return out, last, n == limit, nil
}

// backlogs reports the undelivered count per URL and the highest SCN id
// queued or covered by a cursor (new ids must be above it).
func (s *Store) backlogs(context.Context) (map[string]int, int64, error) {
	s.lmu.Lock()
	per := map[int64]int{}
	for id, l := range s.live {
		for _, r := range l.targets {
			for t := r.lo; t <= r.hi; t++ {
				if s.owes(l, id, t) {
					per[t]++
				}
			}
		}
	}
	maxID := s.maxSCN
	s.lmu.Unlock()
	s.tmu.Lock()
	defer s.tmu.Unlock()
	out := make(map[string]int, len(per))
	for t, n := range per {
		out[s.urls[t]] = n
	}
	return out, maxID, nil
}
