package statemgr

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/statemgr/ethernet"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Store is HSM's persistent state on SQLite. Methods are split across files by
// concern (components, groups, locks, ...), all on this one type.
//
// Components are mirrored in an in-memory index loaded at open; every
// component write goes through the group committer (commit.go), which updates
// SQLite first and the index after the commit. Groups, partitions and their
// members (groups_index.go) and reservations (locks_index.go) are mirrored
// the same way.
type Store struct {
	db  *sqldb.DB
	now func() time.Time

	ix     *index
	gx     *groupIndex
	commit committer
	// outbox wakes the relay when SCNs are appended; subs when subscriptions change.
	outbox, subs *signal
	tail         outboxTail
	layout       LayoutSource
	vocab        *Vocab
	// lockMu serialises lock operations with their refresh of the index.
	lockMu sync.Mutex
	// gmu serialises group writes with their update of gx.
	gmu sync.Mutex
	// rx is the in-memory copy of the reservations; resvMu serialises
	// reservation writes with their update of rx.
	rx     *resvIndex
	resvMu sync.Mutex
	// epoch is the database's creation time (unix ns), carried by its SCNs.
	epoch int64
	// eth is the Ethernet interfaces, which discovery fills.
	eth *ethernet.Store
}

// StoreConfig holds what a Store depends on besides its database file.
type StoreConfig struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Layout, when set, gives the default NID, Role and SubRole of nodes
	// created without them and absent from the NodeMaps (SLS).
	Layout LayoutSource
}

// OpenStore opens (creating if needed) the SQLite database at path, applies
// the migrations and loads the components into memory.
func OpenStore(ctx context.Context, path string, cfg StoreConfig) (*Store, error) {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	migs, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("hsm migrations: %w", err)
	}
	db, err := sqldb.Open(ctx, path, migs)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, now: now, ix: newIndex(), outbox: newSignal(), subs: newSignal(),
		vocab: NewVocab(), layout: cfg.Layout, eth: ethernet.NewStore(db, now)}
	if err := s.loadEpoch(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.loadOutboxFloor(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.loadComponents(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.loadGroups(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.loadReservations(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Vocab returns the Roles and SubRoles the Store accepts; extend it with a
// site's values (LoadHMSConfig).
func (s *Store) Vocab() *Vocab { return s.vocab }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

// signal is a broadcast wake-up: Wait returns a channel closed at the next
// wake.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func newSignal() *signal { return &signal{ch: make(chan struct{})} }

func (g *signal) wait() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ch
}

func (g *signal) wake() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.ch)
	g.ch = make(chan struct{})
}
