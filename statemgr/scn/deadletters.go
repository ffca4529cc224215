package scn

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// deadLetterKeep is how many dead letters are kept: the newest ones. With
// SCNs of at most scnMaxComponents components this bounds the table to a
// few hundred MiB even if every one of them is a full bulk SCN.
const deadLetterKeep = 1000

// addDeadLetter stores d (its ID and Time are set here) and drops the
// oldest dead letters beyond deadLetterKeep.
func (s *Store) addDeadLetter(ctx context.Context, d hsm.DeadLetter) error {
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		return sqldb.InsertCapped(ctx, tx, "scn_deadletters", deadLetterKeep,
			`INSERT INTO scn_deadletters (subscription, subscriber, seq, epoch, error, created, body)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, d.SubscriptionID, d.Subscriber, d.Seq, d.Epoch, d.Error,
			s.now().UTC().Format(core.TSFormat), string(d.SCN))
	})
}

// deadLetters returns the stored dead letters, oldest first.
func (s *Store) deadLetters(ctx context.Context) ([]hsm.DeadLetter, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT id, subscription, subscriber, seq, epoch, error, created, body
		FROM scn_deadletters ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("read scn dead letters: %w", err)
	}
	defer rows.Close()
	out := []hsm.DeadLetter{}
	for rows.Next() {
		var d hsm.DeadLetter
		var created, body string
		if err := rows.Scan(&d.ID, &d.SubscriptionID, &d.Subscriber, &d.Seq, &d.Epoch, &d.Error, &created, &body); err != nil {
			return nil, fmt.Errorf("read scn dead letters: %w", err)
		}
		d.Time, _ = time.Parse(core.TSFormat, created)
		d.SCN = json.RawMessage(body)
		out = append(out, d)
	}
	return out, rows.Err()
}

// deleteDeadLetters deletes the dead letter numbered id, or every one when
// all is true. Deleting one that is not stored is an ErrNotFound.
func (s *Store) deleteDeadLetters(ctx context.Context, id int64, all bool) error {
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		if all {
			_, err := tx.ExecContext(ctx, `DELETE FROM scn_deadletters`)
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM scn_deadletters WHERE id = ?`, id)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err == nil && n == 0 {
			err = problem.NotFoundf("no dead letter %d", id)
		}
		return err
	})
}

// deleteDeadLetters answers DELETE /Subscriptions/SCN/deadletters (every
// one) and DELETE /Subscriptions/SCN/deadletters/{id} (an extension, as the
// list is; admin): a dead letter dealt with is removed instead of waiting to
// be pushed out by newer ones. 204, 404 for a letter not stored, 400 for an
// id that is not a positive number.
func (a *API) deleteDeadLetters(w http.ResponseWriter, r *http.Request) {
	var id int64
	all := r.PathValue("id") == ""
	if !all {
		n, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil || n <= 0 {
			problem.Write(w, r, a.log, problem.Invalidf("dead letter id %q: not a positive number", r.PathValue("id")))
			return
		}
		id = n
	}
	if err := a.store.deleteDeadLetters(r.Context(), id, all); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) listDeadLetters(w http.ResponseWriter, r *http.Request) {
	dl, err := a.store.deadLetters(r.Context())
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, hsm.DeadLetterList{DeadLetters: dl})
}
