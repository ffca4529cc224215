package orchestrator

import (
	"context"
	"database/sql"
	"fmt"
)

// configRun is what the configuration command did for one node: the
// configuration asked for, its status (pending, running, configured,
// failed), a failure's error and the run (gen) that may write its result;
// while it runs, its process group (pid) and token ($BOS_CONFIG_RUN).
type configRun struct {
	node, config, status, err string
	gen                       uint64
	pid                       int
	token                     string
}

// configRuns loads every node's configuration run.
func (s *Store) configRuns(ctx context.Context) ([]configRun, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT node, config, status, error, gen, pid, token FROM config_runs ORDER BY node`)
	if err != nil {
		return nil, fmt.Errorf("read configuration runs: %w", err)
	}
	defer rows.Close()
	var out []configRun
	for rows.Next() {
		var r configRun
		var gen, pid int64
		if err := rows.Scan(&r.node, &r.config, &r.status, &r.err, &gen, &pid, &r.token); err != nil {
			return nil, fmt.Errorf("read configuration runs: %w", err)
		}
		r.gen, r.pid = uint64(gen), int(pid)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read configuration runs: %w", err)
	}
	return out, nil
}

// putConfigRuns records the nodes' runs whole (a new configuration asked
// for, or a run that starts).
func (s *Store) putConfigRuns(ctx context.Context, runs []configRun) error {
	return s.execConfigRuns(ctx, runs, `INSERT INTO config_runs (node, config, status, error, gen, pid, token) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (node) DO UPDATE SET config = excluded.config, status = excluded.status, error = excluded.error,
		gen = excluded.gen, pid = excluded.pid, token = excluded.token`,
		func(r configRun) []any {
			return []any{r.node, r.config, r.status, r.err, int64(r.gen), int64(r.pid), r.token}
		})
}

// startedConfigRuns records the process group and token of the run
// (gen) of the nodes whose newest run it still is.
func (s *Store) startedConfigRuns(ctx context.Context, runs []configRun) error {
	return s.execConfigRuns(ctx, runs, `UPDATE config_runs SET pid = ?, token = ? WHERE node = ? AND gen = ?`,
		func(r configRun) []any { return []any{int64(r.pid), r.token, r.node, int64(r.gen)} })
}

// endConfigRuns records the results of runs, on the nodes whose newest run
// (gen) each still is.
func (s *Store) endConfigRuns(ctx context.Context, runs []configRun) error {
	return s.execConfigRuns(ctx, runs, `UPDATE config_runs SET status = ?, error = ? WHERE node = ? AND gen = ?`,
		func(r configRun) []any { return []any{r.status, r.err, r.node, int64(r.gen)} })
}

// deleteConfigRuns forgets the nodes' runs.
func (s *Store) deleteConfigRuns(ctx context.Context, nodes []string) error {
	runs := make([]configRun, len(nodes))
	for i, n := range nodes {
		runs[i].node = n
	}
	return s.execConfigRuns(ctx, runs, `DELETE FROM config_runs WHERE node = ?`, func(r configRun) []any { return []any{r.node} })
}

// execConfigRuns runs query once per run, with args(run), in one
// transaction.
func (s *Store) execConfigRuns(ctx context.Context, runs []configRun, query string, args func(configRun) []any) error {
	if len(runs) == 0 {
		return nil
	}
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, query)
		if err != nil {
			return fmt.Errorf("store configuration runs: %w", err)
		}
		defer stmt.Close()
		for _, r := range runs {
			if _, err := stmt.ExecContext(ctx, args(r)...); err != nil {
				return fmt.Errorf("store configuration run of %s: %w", r.node, err)
			}
		}
		return nil
	})
}
