package scn

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
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

func (a *API) listDeadLetters(w http.ResponseWriter, r *http.Request) {
	dl, err := a.store.deadLetters(r.Context())
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, hsm.DeadLetterList{DeadLetters: dl})
}
