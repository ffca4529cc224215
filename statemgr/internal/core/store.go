package core

import (
	"context"
	"io/fs"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hmsuite/hms/internal/sqldb"
)

// Store is the shared part of HSM's persistent state on SQLite: the database
// handle, the commit pipeline, the SCN outbox and the in-memory indexes the
// resource packages read and update.
//
// Components are mirrored in an in-memory index loaded at open; every
// Component write goes through the group committer (commit.go), which updates
// SQLite first and the index after the commit. Groups, partitions and their
// Members (groups_index.go) and reservations (locks_index.go) are mirrored
// the same way.
type Store struct {
	DB  *sqldb.DB
	Now func() time.Time

	Ix     *Index
	Gx     *GroupIndex
	commit committer
	// Outbox wakes the relay when SCNs are appended; subs when subscriptions change.
	Outbox, Subs *Signal
	Tail         OutboxTail
	Layout       LayoutSource
	vocab        *Vocab
	// LockMu serialises lock operations with their refresh of the index.
	LockMu sync.Mutex
	// GroupMu serialises group writes with their update of gx.
	GroupMu sync.Mutex
	// Rx is the in-memory copy of the reservations; resvMu serialises
	// reservation writes with their update of rx.
	Rx     *ResvIndex
	ResvMu sync.Mutex
	// Epoch is the database's creation time (unix ns), carried by its SCNs.
	Epoch int64
	// history says component State and Flag changes are recorded;
	// historySeq is the last seq given to a component_history row.
	history    bool
	historySeq atomic.Int64
}

// Config holds what a Store depends on besides its database.
type Config struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Layout, when set, gives the default NID, Role and SubRole of nodes
	// Created without them and absent from the NodeMaps (SLS).
	Layout LayoutSource
	// NoHistory turns off the component history: State and Flag changes
	// are not recorded in component_history.
	NoHistory bool
}

// Open opens (creating if needed) the SQLite database at path, applies
// migs and loads the components, groups and reservations into memory.
func Open(ctx context.Context, path string, migs fs.FS, cfg Config) (*Store, error) {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	db, err := sqldb.Open(ctx, path, migs)
	if err != nil {
		return nil, err
	}
	s := &Store{DB: db, Now: now, Ix: newIndex(), Outbox: newSignal(), Subs: newSignal(),
		vocab: NewVocab(), Layout: cfg.Layout, history: !cfg.NoHistory}
	if err := s.loadEpoch(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.loadHistorySeq(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.loadOutboxFloor(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.LoadComponents(ctx); err != nil {
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
func (s *Store) Close() error { return s.DB.Close() }

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.DB.Ping(ctx) }

// Signal is a broadcast wake-up: Wait returns a channel closed at the next
// Wake.
type Signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func newSignal() *Signal { return &Signal{ch: make(chan struct{})} }

func (g *Signal) Wait() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ch
}

func (g *Signal) Wake() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.ch)
	g.ch = make(chan struct{})
}

// OnTick calls fn every interval until ctx is done.
func OnTick(ctx context.Context, every time.Duration, fn func()) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}
