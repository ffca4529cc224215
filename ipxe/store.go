package ipxe

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/hmsuite/hms/internal/sqldb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Image kinds as stored.
const (
	kindKernel = "kernel"
	kindInitrd = "initrd"
)

// Store keeps the boot parameters: the database (SQLite or PostgreSQL) is
// the durable truth, and the whole table is also held in memory (it is
// small: one row per node at most) so a boot script never waits for the
// database. Memory changes only after the transaction that changes the
// database commits.
type Store struct {
	db *sqldb.DB

	wmu sync.Mutex // serialises changes, so a check-then-write is atomic

	mu      sync.RWMutex
	entries map[string]*Entry
	images  map[imageKey]Image
}

type imageKey struct{ kind, path string }

// change is one atomic edit of the store.
type change struct {
	put       map[string]*Entry
	del       []string
	putImages map[imageKey]Image
	delImages []imageKey
}

func newChange() *change {
	return &change{put: map[string]*Entry{}, putImages: map[imageKey]Image{}}
}

// OpenStore opens (creating if needed) the SQLite file at path, or the
// PostgreSQL database a postgres:// path names (sqldb.Open), and loads it.
func OpenStore(ctx context.Context, path string) (*Store, error) {
	db, err := sqldb.OpenEmbedded(ctx, path, migrationFiles)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, entries: map[string]*Entry{}, images: map[imageKey]Image{}}
	if err := s.load(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

func (s *Store) load(ctx context.Context) error {
	rows, err := s.db.R.QueryContext(ctx, `SELECT key, params, kernel, initrd, cloud_init, token FROM entries`)
	if err != nil {
		return fmt.Errorf("load boot parameters: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var key, ci string
		e := &Entry{}
		if err := rows.Scan(&key, &e.Params, &e.Kernel, &e.Initrd, &ci, &e.Token); err != nil {
			return fmt.Errorf("load boot parameters: %w", err)
		}
		if err := json.Unmarshal([]byte(ci), &e.CloudInit); err != nil {
			return fmt.Errorf("load boot parameters of %s: cloud-init: %w", key, err)
		}
		s.entries[key] = e
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load boot parameters: %w", err)
	}
	irows, err := s.db.R.QueryContext(ctx, `SELECT kind, path, params FROM images`)
	if err != nil {
		return fmt.Errorf("load images: %w", err)
	}
	defer irows.Close()
	for irows.Next() {
		var k imageKey
		var params string
		if err := irows.Scan(&k.kind, &k.path, &params); err != nil {
			return fmt.Errorf("load images: %w", err)
		}
		s.images[k] = Image{Path: k.path, Params: params}
	}
	return irows.Err()
}

// apply writes ch in one transaction, then to memory.
func (s *Store) apply(ctx context.Context, ch *change) error {
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		for _, k := range ch.del {
			if _, err := tx.ExecContext(ctx, `DELETE FROM entries WHERE key = ?`, k); err != nil {
				return fmt.Errorf("delete boot parameters of %s: %w", k, err)
			}
		}
		for k, e := range ch.put {
			ci, err := json.Marshal(e.CloudInit)
			if err != nil {
				return fmt.Errorf("encode cloud-init of %s: %w", k, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO entries (key, params, kernel, initrd, cloud_init, token)
				VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET params = excluded.params,
				kernel = excluded.kernel, initrd = excluded.initrd, cloud_init = excluded.cloud_init,
				token = excluded.token`, k, e.Params, e.Kernel, e.Initrd, string(ci), e.Token); err != nil {
				return fmt.Errorf("store boot parameters of %s: %w", k, err)
			}
		}
		for _, k := range ch.delImages {
			if _, err := tx.ExecContext(ctx, `DELETE FROM images WHERE kind = ? AND path = ?`, k.kind, k.path); err != nil {
				return fmt.Errorf("delete %s %s: %w", k.kind, k.path, err)
			}
		}
		for k, im := range ch.putImages {
			if _, err := tx.ExecContext(ctx, `INSERT INTO images (kind, path, params) VALUES (?, ?, ?)
				ON CONFLICT (kind, path) DO UPDATE SET params = excluded.params`, k.kind, k.path, im.Params); err != nil {
				return fmt.Errorf("store %s %s: %w", k.kind, k.path, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range ch.del {
		delete(s.entries, k)
	}
	for k, e := range ch.put {
		s.entries[k] = e
	}
	for _, k := range ch.delImages {
		delete(s.images, k)
	}
	for k, im := range ch.putImages {
		s.images[k] = im
	}
	return nil
}

// entry returns the entry stored under key. Entries are never modified in
// place (a change stores a new one), so the pointer may be read freely.
func (s *Store) entry(key string) (*Entry, bool) {
	s.mu.RLock()
	e, ok := s.entries[key]
	s.mu.RUnlock()
	return e, ok
}

// image returns the image record of kind at path.
func (s *Store) image(kind, path string) (Image, bool) {
	s.mu.RLock()
	im, ok := s.images[imageKey{kind, path}]
	s.mu.RUnlock()
	return im, ok
}

// keyed is one stored entry and its key.
type keyed struct {
	Key string
	*Entry
}

// all returns every image record (kernels, then initrds, by path) and every
// entry (by key), the order GET bootparameters and dumpstate list them in.
func (s *Store) all() (kernels, initrds []Image, entries []keyed) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for k, im := range s.images {
		if k.kind == kindKernel {
			kernels = append(kernels, im)
		} else {
			initrds = append(initrds, im)
		}
	}
	for k, e := range s.entries {
		entries = append(entries, keyed{Key: k, Entry: e})
	}
	sort.Slice(kernels, func(i, j int) bool { return kernels[i].Path < kernels[j].Path })
	sort.Slice(initrds, func(i, j int) bool { return initrds[i].Path < initrds[j].Path })
	sort.Slice(entries, func(i, j int) bool { return entries[i].Key < entries[j].Key })
	return kernels, initrds, entries
}
