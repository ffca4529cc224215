package fanout

import (
	"context"
	"database/sql"
	"fmt"
)

// loadQueueState rebuilds the queue in memory from the tables (see
// queue_store.go) and deletes what nobody is owed any more: SCNs every
// target has, and rows left behind by a crash between an enqueue that
// failed and its cleanup.
func (s *Store) loadQueueState(ctx context.Context) error {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	err := s.scan(ctx, `SELECT id, url, acked FROM targets`, func(rows *sql.Rows) error {
		var id, acked int64
		var u string
		if err := rows.Scan(&id, &u, &acked); err != nil {
			return err
		}
		s.targets[u], s.urls[id], s.cursors[id] = id, u, acked
		s.maxSCN = max(s.maxSCN, acked)
		return nil
	})
	if err == nil {
		err = s.scan(ctx, `SELECT id FROM scns`, func(rows *sql.Rows) error {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			s.live[id] = &liveSCN{}
			s.maxSCN = max(s.maxSCN, id)
			return nil
		})
	}
	if err == nil {
		err = s.scan(ctx, `SELECT scn, lo, hi FROM scn_targets ORDER BY scn, lo`, func(rows *sql.Rows) error {
			var id int64
			var r rng
			if err := rows.Scan(&id, &r.lo, &r.hi); err != nil {
				return err
			}
			if l := s.live[id]; l != nil {
				l.targets = append(l.targets, r)
			}
			return nil
		})
	}
	if err == nil {
		err = s.scan(ctx, `SELECT scn, targets FROM acks`, s.loadAck)
	}
	if err != nil {
		return fmt.Errorf("load queued SCNs: %w", err)
	}
	var done []int64
	for id, l := range s.live {
		if l.offs == nil {
			l.index()
		}
		if l.pending = s.count(l, id); l.pending == 0 {
			done = append(done, id)
			delete(s.live, id)
		}
	}
	err = s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		if err := s.deleteSCNs(ctx, tx, done); err != nil {
			return err
		}
		for _, q := range []string{`DELETE FROM scn_targets WHERE scn NOT IN (SELECT id FROM scns)`,
			`DELETE FROM acks WHERE scn NOT IN (SELECT id FROM scns)`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete delivered SCNs: %w", err)
	}
	return nil
}

// loadAck reads one acks row into the SCN it names; lmu is held.
func (s *Store) loadAck(rows *sql.Rows) error {
	var id int64
	var list string
	if err := rows.Scan(&id, &list); err != nil {
		return err
	}
	l := s.live[id]
	if l == nil {
		return nil
	}
	rs, err := parseRanges(list)
	if err != nil {
		return fmt.Errorf("acknowledgements of SCN %d: %w", id, err)
	}
	if l.offs == nil { // its targets are all loaded (scn_targets is read first)
		l.index()
	}
	for _, r := range rs {
		for t := r.lo; t <= r.hi; t++ {
			l.give(t)
		}
	}
	return nil
}

// scan runs query on the read pool and calls fn for each row.
func (s *Store) scan(ctx context.Context, query string, fn func(*sql.Rows) error) error {
	rows, err := s.db.R.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
