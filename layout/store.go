package layout

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/internal/xname"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Store is the SLS state: hardware and networks in SQLite, plus an in-memory
// index of the hardware that serves every hardware read. Writers are
// serialised; each commits its transaction first and then applies the same
// change to the index, so readers see a write only once it is durable.
type Store struct {
	db  *sqldb.DB
	now func() time.Time

	wmu sync.Mutex // held for the whole of a write: transaction, then index update

	// puts group-commits concurrent hardware PUTs and POSTs.
	puts *sqldb.Group[*hwPut]

	mu  sync.RWMutex // guards ix and ver
	ix  *index
	ver version

	// redact names the ExtraProperties keys blanked in rendered answers
	// (SetRedactedProperties); set before serving, read-only after.
	redact map[string]bool
}

type version struct {
	counter int64
	updated time.Time
}

// OpenStore opens (creating if needed) the SQLite database at path, or the
// PostgreSQL database a postgres:// path names (sqldb.Open), applies the
// migrations and loads the hardware index. now is the clock; nil means time.Now.
func OpenStore(ctx context.Context, path string, now func() time.Time) (*Store, error) {
	if now == nil {
		now = time.Now
	}
	db, err := sqldb.OpenEmbedded(ctx, path, migrationFiles)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, now: now}
	s.puts = sqldb.NewGroup(putRound, s.commitPuts)
	if err := s.loadIndex(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

// loadIndex reads the version row and every hardware row into memory.
func (s *Store) loadIndex(ctx context.Context) error {
	var counter, micros int64
	if err := s.db.R.QueryRowContext(ctx, `SELECT counter, last_updated FROM version WHERE id = 1`).Scan(&counter, &micros); err != nil {
		return fmt.Errorf("read sls version: %w", err)
	}
	if micros == 0 {
		var err error
		if micros, err = s.stampBase(ctx); err != nil {
			return err
		}
	}
	rows, err := s.db.R.QueryContext(ctx, `SELECT xname, class, extra, last_updated FROM hardware ORDER BY xname`)
	if err != nil {
		return fmt.Errorf("read hardware: %w", err)
	}
	defer rows.Close()
	var (
		entries   []*entry
		lastMicro int64 = -1
		lastText  string
		names     = interner{}
	)
	for rows.Next() {
		var (
			h       Hardware
			extra   sql.NullString
			updated int64
		)
		if err := rows.Scan(&h.Xname, &h.Class, &extra, &updated); err != nil {
			return fmt.Errorf("read hardware: %w", err)
		}
		if updated != lastMicro {
			lastMicro, lastText = updated, timeText(time.UnixMicro(updated))
		}
		h.ExtraProperties = []byte(extra.String)
		e, err := newEntry(h, time.UnixMicro(updated), lastText, names)
		if err != nil {
			return fmt.Errorf("stored hardware %s: %w", h.Xname, err)
		}
		entries = append(entries, e)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read hardware: %w", err)
	}
	s.ix = newIndex(entries)
	s.ver = version{counter: counter, updated: time.UnixMicro(micros)}
	return nil
}

// stampBase records the time of a version row never written, so that
// /version of a fresh database has a real LastUpdated, as the shipped SLS
// has from the base version row it records at creation.
func (s *Store) stampBase(ctx context.Context) (int64, error) {
	micros := s.now().UnixMicro()
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE version SET last_updated = ? WHERE id = 1 AND last_updated = 0`, micros)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("stamp sls base version: %w", err)
	}
	return micros, nil
}

// Version returns the change counter and the time of the last write.
func (s *Store) Version() Version {
	s.mu.RLock()
	v := s.ver
	s.mu.RUnlock()
	return Version{Counter: v.counter, LastUpdated: v.updated.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano)}
}

// write runs fn in a transaction that also bumps the version, then, once it has
// committed, applies the change to the index with apply. The caller holds wmu.
func (s *Store) write(ctx context.Context, now time.Time, fn func(*sql.Tx) error, apply func(*Store)) error {
	return s.writeN(ctx, now, 1, fn, apply)
}

// writeN is write of n changes: the counter counts each.
func (s *Store) writeN(ctx context.Context, now time.Time, n int64, fn func(*sql.Tx) error, apply func(*Store)) error {
	next := s.ver.counter + n
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return s.bumpVersion(ctx, tx, next, now)
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	if apply != nil {
		apply(s)
	}
	s.ver = version{counter: next, updated: now}
	s.mu.Unlock()
	return nil
}

// bumpVersion sets the version row to counter at now, in tx.
func (s *Store) bumpVersion(ctx context.Context, tx *sql.Tx, counter int64, now time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE version SET counter = ?, last_updated = ? WHERE id = 1`, counter, now.UnixMicro())
	if err != nil {
		return fmt.Errorf("bump sls version: %w", err)
	}
	return nil
}

const upsertHardware = `INSERT INTO hardware (xname, parent, type, class, extra, last_updated) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (xname) DO UPDATE SET parent = excluded.parent, type = excluded.type, class = excluded.class,
extra = excluded.extra, last_updated = excluded.last_updated`

func extraArg(e *entry) any {
	if e.extra == nil {
		return nil
	}
	return string(e.extra)
}

// PutHardware creates or replaces the object h.Xname and reports whether it
// was created. The derived fields of h are ignored.
func (s *Store) PutHardware(ctx context.Context, h Hardware) (created bool, err error) {
	return s.putHardware(ctx, h, false)
}

// CreateHardware creates the object h.Xname; it is an ErrConflict error if the
// object exists.
func (s *Store) CreateHardware(ctx context.Context, h Hardware) error {
	_, err := s.putHardware(ctx, h, true)
	return err
}

func (s *Store) putHardware(ctx context.Context, h Hardware, mustCreate bool) (bool, error) {
	now := s.now()
	e, err := newEntry(h, now, timeText(now), nil)
	if err != nil {
		return false, err
	}
	p := &hwPut{e: e, mustCreate: mustCreate}
	err = s.puts.Do(ctx, p)
	return p.created, err
}

// putRound bounds the PUTs one transaction carries.
const putRound = 512

// hwPut is one hardware PUT or POST waiting for its group commit.
type hwPut struct {
	e          *entry
	mustCreate bool
	created    bool // set by the commit
}

// commitPuts stores a round of PUTs in one transaction (clients that send
// many at once, as `hms apply` does, pay one fsync per round, not per
// object), each in its own savepoint (sqldb.WriteEach), then puts the
// stored ones in the index in their order. A POST of an object that
// exists, or that an earlier PUT of the round creates, is refused alone;
// so is a PUT whose write fails, while the rest commit together (a failed
// round used to be retried one transaction per PUT).
func (s *Store) commitPuts(ctx context.Context, puts []*hwPut) []error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	errs := make([]error, len(puts))
	seen := map[string]bool{}
	var ok []*hwPut
	var at []int
	for i, p := range puts {
		if errs[i] = s.checkPut(p, seen[p.e.xname]); errs[i] == nil {
			seen[p.e.xname] = true
			ok, at = append(ok, p), append(at, i)
		}
	}
	if len(ok) == 0 {
		return errs
	}
	fns := make([]func(*sql.Tx) error, len(ok))
	for j, p := range ok {
		fns[j] = func(tx *sql.Tx) error { return s.execPut(ctx, tx, p.e) }
	}
	now := s.now()
	res := s.db.WriteEach(ctx, fns, func(tx *sql.Tx, stored []bool) error {
		if n := count(stored); n > 0 {
			return s.bumpVersion(ctx, tx, s.ver.counter+int64(n), now)
		}
		return nil
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for j, p := range ok {
		if errs[at[j]] = res[j]; res[j] == nil {
			s.ix.put(p.e)
			n++
		}
	}
	if n > 0 {
		s.ver = version{counter: s.ver.counter + n, updated: now}
	}
	return errs
}

// count counts the true values of b.
func count(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// checkPut refuses a POST of an object that exists (or that an earlier PUT
// of the round creates: queued) and notes whether p creates its object.
func (s *Store) checkPut(p *hwPut, queued bool) error {
	_, exists := s.ix.byXname[p.e.xname]
	if exists = exists || queued; exists && p.mustCreate {
		return mark(problem.Conflictf("hardware %s already exists", p.e.xname), failHWExists, p.e.xname)
	}
	p.created = !exists
	return nil
}

// storePuts writes puts in one transaction, then to the index.
func (s *Store) storePuts(ctx context.Context, puts []*hwPut) error {
	if len(puts) == 0 {
		return nil
	}
	return s.writeN(ctx, s.now(), int64(len(puts)), func(tx *sql.Tx) error {
		for _, p := range puts {
			if err := s.execPut(ctx, tx, p.e); err != nil {
				return err
			}
		}
		return nil
	}, func(s *Store) {
		for _, p := range puts {
			s.ix.put(p.e)
		}
	})
}

// execPut writes e in tx.
func (s *Store) execPut(ctx context.Context, tx *sql.Tx, e *entry) error {
	st, err := s.db.Stmt(ctx, tx, upsertHardware)
	if err != nil {
		return fmt.Errorf("store hardware: %w", err)
	}
	if _, err := st.ExecContext(ctx, e.xname, e.parent, e.stype, string(e.class), extraArg(e), e.updated); err != nil {
		return fmt.Errorf("store hardware %s: %w", e.xname, err)
	}
	return nil
}

// PutHardwareAll creates or replaces every object of hs (as PutHardware
// does each) in one transaction, all or nothing: the bulk extension
// (PUT /v1/bulk/hardware). It returns how many it created.
func (s *Store) PutHardwareAll(ctx context.Context, hs []Hardware) (created int, err error) {
	now := s.now()
	puts := make([]*hwPut, len(hs))
	seen := make(map[string]bool, len(hs))
	for i, h := range hs {
		e, err := newEntry(h, now, timeText(now), nil)
		if err != nil {
			return 0, fmt.Errorf("[%d]: %w", i, err)
		}
		if seen[e.xname] {
			return 0, problem.Invalidf("[%d]: %s is listed twice", i, e.xname)
		}
		seen[e.xname], puts[i] = true, &hwPut{e: e}
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	for _, p := range puts {
		if s.checkPut(p, false); p.created {
			created++
		}
	}
	return created, s.storePuts(ctx, puts)
}

// DeleteHardware deletes the object x and everything below it in the xname
// tree, in one transaction, and returns the deleted xnames. It is an
// ErrNotFound error if x is not stored.
func (s *Store) DeleteHardware(ctx context.Context, x string) ([]string, error) {
	px, err := xname.Parse(x)
	if err != nil {
		return nil, mark(problem.Invalidf("%v", err), failXname, x)
	}
	x = px.String()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.ix.byXname[x] == nil {
		return nil, mark(problem.NotFoundf("hardware %s not found", x), failNoHardware, x)
	}
	doomed := s.ix.subtree(x)
	err = s.write(ctx, s.now(), func(tx *sql.Tx) error {
		// Descendants are x followed by a lower-case letter: the range [x+"a", x+"{").
		_, err := tx.ExecContext(ctx, `DELETE FROM hardware WHERE xname = ? OR (xname >= ? AND xname < ?)`, x, x+"a", x+"{")
		if err != nil {
			return fmt.Errorf("delete hardware %s: %w", x, err)
		}
		return nil
	}, func(s *Store) { s.ix.removeAll(doomed) })
	if err != nil {
		return nil, err
	}
	names := make([]string, len(doomed))
	for i, e := range doomed {
		names[i] = e.xname
	}
	return names, nil
}

// GetHardware returns the object x (normalised first); ok is false if it is
// not stored.
func (s *Store) GetHardware(x string) (h Hardware, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e := s.ix.byXname[xname.Normalize(x)]
	if e == nil {
		return Hardware{}, false
	}
	return toHardware(e, s.ix.children[e.xname]), true
}

// AppendHardware appends the JSON of object x (already normalised) to b; ok is
// false if it is not stored.
func (s *Store) AppendHardware(b []byte, x string) (_ []byte, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e := s.ix.byXname[x]
	if e == nil {
		return b, false
	}
	return appendEntry(b, e, e.kids, s.redact), true
}

// results are the entries a read matched, each with its children list, copied
// under the read lock so they can be rendered after it is released: entries
// are immutable and children lists are copy-on-write.
type results struct {
	entries []*entry
	kids    [][]*entry
}

func (s *Store) snapshot(found []*entry) results {
	r := results{entries: found, kids: make([][]*entry, len(found))}
	for i, e := range found {
		r.kids[i] = e.kids
	}
	return r
}

// searchResults returns the objects matching q; the empty query matches all.
func (s *Store) searchResults(q HardwareQuery) results {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.snapshot(s.ix.search(q))
}

// allResults returns every object.
func (s *Store) allResults() results {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.snapshot(slices.Clone(s.ix.all))
}

// SearchHardware returns the objects matching q, in xname order.
func (s *Store) SearchHardware(q HardwareQuery) []Hardware {
	s.mu.RLock()
	defer s.mu.RUnlock()
	found := s.ix.search(q)
	out := make([]Hardware, len(found))
	for i, e := range found {
		out[i] = toHardware(e, s.ix.children[e.xname])
	}
	return out
}

// HardwareCount returns the number of stored hardware objects.
func (s *Store) HardwareCount() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.ix.all)
}
