package layout

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/sqldb"
)

// Networks are few (tens), so they are read from the database on each request
// rather than indexed in memory.

// ListNetworks returns every network, by name.
func (s *Store) ListNetworks(ctx context.Context) ([]Network, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT doc, last_updated FROM networks ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list networks: %w", err)
	}
	defer rows.Close()
	out := []Network{}
	for rows.Next() {
		n, err := scanNetwork(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list networks: %w", err)
	}
	return out, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanNetwork(r scanner) (Network, error) {
	var (
		doc     string
		updated int64
		n       Network
	)
	if err := r.Scan(&doc, &updated); err != nil {
		return n, err
	}
	if err := json.Unmarshal([]byte(doc), &n); err != nil {
		return n, fmt.Errorf("stored network: %w", err)
	}
	n.LastUpdated, n.LastUpdatedTime = unixSeconds(updated), timeText(time.UnixMicro(updated))
	return n, nil
}

// GetNetwork returns the network called name.
func (s *Store) GetNetwork(ctx context.Context, name string) (Network, error) {
	n, err := scanNetwork(s.db.R.QueryRowContext(ctx, `SELECT doc, last_updated FROM networks WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return n, mark(problem.NotFoundf("network %q not found", name), failNoNetwork, name)
	}
	if err != nil {
		return n, fmt.Errorf("get network %s: %w", name, err)
	}
	return n, nil
}

// SearchNetworks returns the networks matching q, by name.
func (s *Store) SearchNetworks(ctx context.Context, q NetworkQuery) ([]Network, error) {
	all, err := s.ListNetworks(ctx)
	if err != nil {
		return nil, err
	}
	out := []Network{}
	for _, n := range all {
		if q.matches(n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// PutNetwork creates or replaces the network called name and reports whether
// it was created. n.Name must be name or empty.
func (s *Store) PutNetwork(ctx context.Context, name string, n Network) (created bool, err error) {
	n, err = checkNetwork(n, name)
	if err != nil {
		return false, err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	now := s.now()
	err = s.write(ctx, now, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM networks WHERE name = ?`, n.Name).Scan(&one)
		created = errors.Is(err, sql.ErrNoRows)
		if err != nil && !created {
			return fmt.Errorf("put network %s: %w", n.Name, err)
		}
		return putNetworkTx(ctx, tx, n, now)
	}, nil)
	return created, err
}

// CreateNetwork creates the network n; it is an ErrConflict error if one with
// that name exists.
func (s *Store) CreateNetwork(ctx context.Context, n Network) error {
	n, err := checkNetwork(n, "")
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	now := s.now()
	return s.write(ctx, now, func(tx *sql.Tx) error {
		doc, _ := json.Marshal(n)
		_, err := tx.ExecContext(ctx, `INSERT INTO networks (name, doc, last_updated) VALUES (?, ?, ?)`, n.Name, string(doc), now.UnixMicro())
		if sqldb.IsUniqueViolation(err) {
			return mark(problem.Conflictf("network %q already exists", n.Name), failNetExists, n.Name)
		}
		if err != nil {
			return fmt.Errorf("create network %s: %w", n.Name, err)
		}
		return nil
	}, nil)
}

func putNetworkTx(ctx context.Context, tx *sql.Tx, n Network, now time.Time) error {
	doc, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("encode network %s: %w", n.Name, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO networks (name, doc, last_updated) VALUES (?, ?, ?)
ON CONFLICT (name) DO UPDATE SET doc = excluded.doc, last_updated = excluded.last_updated`, n.Name, string(doc), now.UnixMicro())
	if err != nil {
		return fmt.Errorf("store network %s: %w", n.Name, err)
	}
	return nil
}

// PatchNetwork applies an RFC 7396 merge patch to the network called name and
// returns the result. The patch may not rename the network.
func (s *Store) PatchNetwork(ctx context.Context, name string, patch []byte) (Network, error) {
	var p any
	dec := json.NewDecoder(bytes.NewReader(patch))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		return Network{}, problem.Invalidf("request body: malformed JSON")
	}
	if _, ok := p.(map[string]any); !ok {
		return Network{}, problem.Invalidf("request body: a merge patch must be a JSON object")
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	cur, err := s.GetNetwork(ctx, name)
	if err != nil {
		return cur, err
	}
	cur.LastUpdated, cur.LastUpdatedTime = 0, ""
	curJSON, _ := json.Marshal(cur)
	var target any
	dec = json.NewDecoder(bytes.NewReader(curJSON))
	dec.UseNumber()
	if err := dec.Decode(&target); err != nil {
		return cur, fmt.Errorf("patch network %s: %w", name, err)
	}
	merged, _ := json.Marshal(mergePatch(target, p))
	var n Network
	if err := json.Unmarshal(merged, &n); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return cur, problem.Invalidf("field %s: expected %s, got JSON %s", ute.Field, ute.Type, ute.Value)
		}
		return cur, problem.Invalidf("request body: %v", err)
	}
	if n, err = checkNetwork(n, name); err != nil {
		return cur, err
	}
	now := s.now()
	err = s.write(ctx, now, func(tx *sql.Tx) error { return putNetworkTx(ctx, tx, n, now) }, nil)
	n.LastUpdated, n.LastUpdatedTime = now.Unix(), timeText(now)
	return n, err
}

// DeleteNetwork deletes the network called name.
func (s *Store) DeleteNetwork(ctx context.Context, name string) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.write(ctx, s.now(), func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM networks WHERE name = ?`, name)
		if err != nil {
			return fmt.Errorf("delete network %s: %w", name, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return mark(problem.NotFoundf("network %q not found", name), failNoNetwork, name)
		}
		return nil
	}, nil)
}
