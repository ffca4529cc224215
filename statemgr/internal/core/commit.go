package core

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// Plan is what one write wants done: records to store (new or replacing),
// IDs to delete, and the SCNs the change produces.
type Plan struct {
	// Update says every put replaces an existing component, so the cheaper
	// UPDATE statement serves.
	Update bool
	Puts   []*Record
	Dels   []string
	DelAll bool
	SCNs   []hsm.SCN
	// seqs are the outbox sequence numbers of scns, set at commit.
	seqs []int64
	// Cursors are outbox consumer positions to store.
	Cursors []cursorPos
}

// planFunc computes a plan against the current state (committed plus the
// earlier plans of the same batch). Returning an error rejects this write
// only; nothing of it is applied.
type planFunc func(v *View) (*Plan, error)

// View is the state a planFunc sees: the index overlaid with the writes
// already planned in the current batch.
type View struct {
	ix      *Index
	over    map[string]*Record // nil value: deleted in this batch
	nidOver map[int]string     // NID -> owner, "" when released in this batch
	allGone bool
}

func (v *View) Get(id string) *Record {
	if r, ok := v.over[id]; ok {
		return r
	}
	if v.allGone {
		return nil
	}
	return v.ix.Get(id)
}

// NIDOwner returns the ID holding nid, or "".
func (v *View) NIDOwner(nid int) string {
	if id, ok := v.nidOver[nid]; ok {
		return id
	}
	if v.allGone {
		return ""
	}
	if r := v.ix.ByNID(nid); r != nil {
		if cur, ok := v.over[r.ID]; ok && (cur == nil || !cur.HasNID || cur.NID != nid) {
			return ""
		}
		return r.ID
	}
	return ""
}

func (v *View) apply(p *Plan) {
	if p.DelAll {
		v.allGone = true
		v.over = map[string]*Record{}
		v.nidOver = map[int]string{}
	}
	for _, id := range p.Dels {
		if old := v.Get(id); old != nil && old.HasNID {
			v.nidOver[old.NID] = ""
		}
		v.over[id] = nil
	}
	for _, r := range p.Puts {
		if old := v.Get(r.ID); old != nil && old.HasNID {
			v.nidOver[old.NID] = ""
		}
		v.over[r.ID] = r
		if r.HasNID {
			v.nidOver[r.NID] = r.ID
		}
	}
}

// job is one write waiting for a group commit.
type job struct {
	plan  planFunc
	cause Cause
	got   *Plan
	err   error
	done  chan struct{}
	once  sync.Once
}

// finish reports the outcome of j to its writer, once.
func (j *job) finish(err error) {
	j.once.Do(func() {
		j.err = err
		close(j.done)
	})
}

// committer group-commits concurrent writes: the first writer to arrive
// becomes the leader and commits everything queued, in one transaction per
// round, until the queue is empty; the others wait for their result. There is
// no background goroutine, and a write is acknowledged only after its
// transaction commits.
type committer struct {
	mu      sync.Mutex
	queue   []*job
	leading bool
}

// Write runs p as part of a group commit and returns its plan once committed.
func (s *Store) Write(ctx context.Context, p func(v *View) (*Plan, error)) (*Plan, error) {
	j := &job{plan: p, cause: causeOf(ctx), done: make(chan struct{})}
	c := &s.commit
	c.mu.Lock()
	c.queue = append(c.queue, j)
	if c.leading {
		c.mu.Unlock()
		select {
		case <-j.done:
			return j.got, j.err
		case <-ctx.Done():
			<-j.done // the leader is committing it; report the real outcome
			return j.got, j.err
		}
	}
	c.leading = true
	c.mu.Unlock()
	s.lead(context.WithoutCancel(ctx))
	<-j.done
	return j.got, j.err
}

// lead commits queued batches until the queue is empty. Should a batch
// panic, its writers and those queued get an error and leadership is given
// up before the panic goes on, so later writes do not wait forever.
func (s *Store) lead(ctx context.Context) {
	c := &s.commit
	var batch []*job
	defer func() {
		if p := recover(); p != nil {
			c.mu.Lock()
			queued := c.queue
			c.queue, c.leading = nil, false
			c.mu.Unlock()
			for _, j := range append(batch, queued...) {
				j.finish(fmt.Errorf("component write aborted: %v", p))
			}
			panic(p)
		}
	}()
	c.mu.Lock()
	for len(c.queue) > 0 {
		batch = c.queue
		c.queue = nil
		c.mu.Unlock()
		s.commitBatch(ctx, batch)
		c.mu.Lock()
	}
	c.leading = false
	c.mu.Unlock()
}

// commitBatch plans every job, writes the accepted plans in one transaction,
// then publishes them to the index and wakes the relay.
func (s *Store) commitBatch(ctx context.Context, batch []*job) {
	v := &View{ix: s.Ix, over: map[string]*Record{}, nidOver: map[int]string{}}
	var ok []*job
	var hist []historyRow
	for _, j := range batch {
		p, err := j.plan(v)
		if err != nil {
			j.finish(err)
			continue
		}
		if s.history {
			hist = historyOf(v, p, j.cause, hist)
		}
		v.apply(p)
		j.got = p
		ok = append(ok, j)
	}
	if len(ok) == 0 {
		return
	}
	plans := make([]*Plan, len(ok))
	for i, j := range ok {
		plans[i] = j.got
	}
	var err error
	if !allEmpty(plans) {
		at := s.Now()
		err = s.DB.WriteTx(ctx, func(tx *sql.Tx) error {
			if err := s.writePlans(ctx, tx, plans); err != nil {
				return err
			}
			return s.writeHistory(ctx, tx, hist, at)
		})
	}
	if err == nil {
		s.publish(plans)
	}
	for _, j := range ok {
		j.finish(err)
	}
}

// upsertComponent never updates locked and reservation_disabled: the locks
// code owns those columns (see Store.LockBitsChanged).
const upsertComponent = `INSERT INTO components (id, type, state, flag, enabled, software_status, role, sub_role,
	nid, subtype, net_type, arch, class, reservation_disabled, locked)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (id) DO UPDATE SET type = excluded.type, state = excluded.state, flag = excluded.flag,
	enabled = excluded.enabled, software_status = excluded.software_status, role = excluded.role,
	sub_role = excluded.sub_role, nid = excluded.nid, subtype = excluded.subtype, net_type = excluded.net_type,
	arch = excluded.arch, class = excluded.class`

// updateComponent writes the fields the per-field PATCHes change.
const updateComponent = `UPDATE components SET state = ?, flag = ?, enabled = ?, software_status = ?, role = ?,
	sub_role = ?, nid = ? WHERE id = ?`

// writePlans writes plans in order inside tx with prepared statements,
// preparing only the statements the plans need (a group commit of a few
// single-component PATCHes needs two).
func (s *Store) writePlans(ctx context.Context, tx *sql.Tx, plans []*Plan) error {
	st := &stmts{db: s.DB, tx: tx}
	defer st.close()
	if err := releaseNIDs(ctx, tx, plans); err != nil {
		return err
	}
	for _, p := range plans {
		if p.DelAll {
			if _, err := tx.ExecContext(ctx, `DELETE FROM components`); err != nil {
				return fmt.Errorf("delete components: %w", err)
			}
		}
		for _, id := range p.Dels {
			if err := st.exec(ctx, `DELETE FROM components WHERE id = ?`, id); err != nil {
				return fmt.Errorf("delete component %s: %w", id, err)
			}
		}
		for _, r := range p.Puts {
			if err := st.put(ctx, r, p.Update); err != nil {
				return fmt.Errorf("store component %s: %w", r.ID, err)
			}
		}
		p.seqs = p.seqs[:0] // a retried transaction runs this again
		for i := range p.SCNs {
			p.SCNs[i].Epoch = s.Epoch
		}
		for _, scn := range p.SCNs {
			body, err := json.Marshal(scn)
			if err != nil {
				return fmt.Errorf("encode scn: %w", err)
			}
			seq, err := st.returning(ctx, `INSERT INTO scn_outbox (created, payload) VALUES (?, ?) RETURNING seq`,
				scn.Timestamp.UTC().Format(TSFormat), body)
			if err != nil {
				return fmt.Errorf("append scn to outbox: %w", err)
			}
			p.seqs = append(p.seqs, seq)
		}
		for _, c := range p.Cursors {
			if err := st.exec(ctx, `UPDATE scn_cursors SET seq = ? WHERE name = ?`, c.Seq, c.Name); err != nil {
				return fmt.Errorf("store scn cursor %s: %w", c.Name, err)
			}
		}
	}
	return nil
}

// stmts looks each statement of a transaction up once, on first use, in
// the database's cache of prepared statements.
type stmts struct {
	db *sqldb.DB
	tx *sql.Tx
	m  map[string]*sql.Stmt
}

func (st *stmts) exec(ctx context.Context, q string, args ...any) error {
	p, err := st.stmt(ctx, q)
	if err != nil {
		return err
	}
	_, err = p.ExecContext(ctx, args...)
	return err
}

// returning runs q, an INSERT of one row that returns one integer column
// (RETURNING, not LastInsertId: PostgreSQL drivers have none).
func (st *stmts) returning(ctx context.Context, q string, args ...any) (int64, error) {
	p, err := st.stmt(ctx, q)
	if err != nil {
		return 0, err
	}
	var v int64
	err = p.QueryRowContext(ctx, args...).Scan(&v)
	return v, err
}

func (st *stmts) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if p, ok := st.m[q]; ok {
		return p, nil
	}
	p, err := st.db.Stmt(ctx, st.tx, q)
	if err != nil {
		return nil, err
	}
	if st.m == nil {
		st.m = map[string]*sql.Stmt{}
	}
	st.m[q] = p
	return p, nil
}

func (st *stmts) put(ctx context.Context, r *Record, update bool) error {
	var nid any
	if r.HasNID {
		nid = r.NID
	}
	if update {
		return st.exec(ctx, updateComponent, r.State, r.Flag, r.Enabled, r.SoftwareStatus, r.Role, r.SubRole, nid, r.ID)
	}
	return st.exec(ctx, upsertComponent, r.ID, r.Type, r.State, r.Flag, r.Enabled, r.SoftwareStatus, r.Role,
		r.SubRole, nid, r.Subtype, r.NetType, r.Arch, r.Class, r.ReservationDisabled, r.Locked)
}

func (st *stmts) close() {
	for _, p := range st.m {
		p.Close()
	}
}

// releaseNIDs clears the NID of every component whose NID a plan changes, so
// that swapping NIDs inside one batch never trips the unique index midway.
func releaseNIDs(ctx context.Context, tx *sql.Tx, plans []*Plan) error {
	var ids []string
	for _, p := range plans {
		for _, r := range p.Puts {
			if r.NIDChanged {
				ids = append(ids, r.ID)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, `UPDATE components SET nid = NULL WHERE id = ?`)
	if err != nil {
		return fmt.Errorf("prepare nid release: %w", err)
	}
	defer st.Close()
	for _, id := range ids {
		if _, err := st.ExecContext(ctx, id); err != nil {
			return fmt.Errorf("release nid of %s: %w", id, err)
		}
	}
	return nil
}

// publish applies committed plans to the index and the outbox tail, and
// wakes the outbox consumers.
func (s *Store) publish(plans []*Plan) {
	var rows []OutboxRow
	for _, p := range plans {
		for i, scn := range p.SCNs {
			scn.Seq = p.seqs[i]
			rows = append(rows, OutboxRow{Seq: scn.Seq, Created: scn.Timestamp, SCN: scn})
		}
	}
	if len(rows) > 0 {
		s.Tail.Append(rows)
	}
	scns := false
	for _, p := range plans {
		if p.DelAll {
			s.Ix.reset(nil)
		}
		if len(p.Dels) > 0 {
			s.Ix.remove(p.Dels)
		}
		if len(p.Puts) > 0 {
			s.Ix.put(p.Puts)
		}
		if p.DelAll || len(p.Dels) > 0 {
			s.componentsGone(p.DelAll, p.Dels)
		}
		scns = scns || len(p.SCNs) > 0
	}
	if scns {
		s.Outbox.Wake()
	}
}

// allEmpty reports whether no plan changes anything, so no transaction is needed.
func allEmpty(plans []*Plan) bool {
	for _, p := range plans {
		if p.DelAll || len(p.Dels) > 0 || len(p.Puts) > 0 || len(p.SCNs) > 0 || len(p.Cursors) > 0 {
			return false
		}
	}
	return true
}
