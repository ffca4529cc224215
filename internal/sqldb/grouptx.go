package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// txRound bounds the functions one GroupTx transaction holds.
const txRound = 256

// txJob is one GroupTx call waiting for a commit.
type txJob struct {
	fn func(tx *sql.Tx) error
}

// GroupTx is WriteTx for writes that arrive together: concurrent calls are
// committed in one transaction (a Group round: one fsync for all), each
// function inside its own savepoint, so a function that fails is rolled back
// alone and only its caller sees its error; the others commit. A caller
// returns once the transaction holding its function has committed (or
// failed: then every caller in it gets the error). As with WriteTx, fn must
// be safe to run again, and must not begin, commit or roll back the
// transaction itself.
func (db *DB) GroupTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return db.txs.Do(ctx, &txJob{fn: fn})
}

// errTxLost is returned inside WriteEach when a failed function took the
// whole transaction with it (SQLite rolls a transaction back on some
// errors, an interrupted statement among them), so its savepoint is gone.
var errTxLost = errors.New("transaction rolled back by a failed write")

// commitTxs commits the functions of jobs in one transaction and returns
// each one's error (WriteEach).
func (db *DB) commitTxs(ctx context.Context, jobs []*txJob) []error {
	fns := make([]func(*sql.Tx) error, len(jobs))
	for i, j := range jobs {
		fns[i] = j.fn
	}
	return db.WriteEach(ctx, fns, nil)
}

// WriteEach runs fns in one write transaction (one commit: one fsync),
// each inside its own savepoint, and returns each one's error (nil:
// committed). A function that fails is rolled back alone; the others
// commit together. A function whose failure cost the whole transaction
// (SQLite rolls a transaction back on some errors) gets its error and the
// rest are run again without it. finish, if not nil, runs last in the same
// transaction, told which functions succeeded (ok[i]); its error fails
// every function, as a failed commit does. As with WriteTx, the functions
// must be safe to run again.
func (db *DB) WriteEach(ctx context.Context, fns []func(*sql.Tx) error, finish func(tx *sql.Tx, ok []bool) error) []error {
	errs := make([]error, len(fns))
	if len(fns) == 1 && finish == nil { // nothing to share: no savepoint needed
		errs[0] = db.WriteTx(ctx, fns[0])
		return errs
	}
	live := make([]int, len(fns)) // indexes of the functions still to commit
	for i := range live {
		live[i] = i
	}
	for len(live) > 0 {
		failed := make([]error, len(live))
		lost := -1
		err := db.WriteTx(ctx, func(tx *sql.Tx) error {
			clear(failed)
			lost = -1
			for k, i := range live {
				if err := runSaved(ctx, tx, fns[i]); err != nil {
					failed[k] = err
					if errors.Is(err, errTxLost) {
						lost = k
						return errTxLost
					}
				}
			}
			if finish == nil {
				return nil
			}
			ok := make([]bool, len(fns))
			for k, i := range live {
				ok[i] = failed[k] == nil
			}
			return finish(tx, ok)
		})
		if errors.Is(err, errTxLost) && lost >= 0 {
			errs[live[lost]] = failed[lost]
			live = append(live[:lost:lost], live[lost+1:]...)
			continue
		}
		for k, i := range live {
			errs[i] = err
			if err == nil {
				errs[i] = failed[k]
			}
		}
		break
	}
	return errs
}

// runSaved runs fn inside a savepoint of tx and rolls back to it when fn
// fails. The error is fn's; it also wraps errTxLost when the rollback to
// the savepoint failed, i.e. the transaction is gone.
func runSaved(ctx context.Context, tx *sql.Tx, fn func(tx *sql.Tx) error) error {
	if _, err := tx.ExecContext(ctx, `SAVEPOINT grouped`); err != nil {
		return fmt.Errorf("savepoint: %w: %w", errTxLost, err)
	}
	err := fn(tx)
	if err == nil {
		if _, rerr := tx.ExecContext(ctx, `RELEASE SAVEPOINT grouped`); rerr != nil {
			return fmt.Errorf("release savepoint: %w: %w", errTxLost, rerr)
		}
		return nil
	}
	if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT grouped`); rerr != nil {
		return fmt.Errorf("%w (%w: %w)", err, errTxLost, rerr)
	}
	if _, rerr := tx.ExecContext(ctx, `RELEASE SAVEPOINT grouped`); rerr != nil {
		return fmt.Errorf("%w (%w: %w)", err, errTxLost, rerr)
	}
	return err
}
