package fanout

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/redact"
	"github.com/hmsuite/hms/internal/sqldb"
)

// deadLetterKeep is how many dead letters are kept at most: the newest
// ones. Older than Config.DeadLetterAge they go too.
const deadLetterKeep = 1000

// DeadLetter is a delivery that a subscriber refused for good (a 4xx answer
// other than 408 and 429): instead of retrying it ahead of every later SCN
// until the subscriber expires, hmnfd set it aside. GET /hmi/v2/deadletters
// lists them.
type DeadLetter struct {
	// ID numbers dead letters in the order they were set aside.
	ID int64 `json:"ID"`
	// Url is the subscriber URL that refused it, its password masked.
	Url string `json:"Url"` //nolint:revive // HMS spelling, as in Subscription
	// Error is the subscriber's answer.
	Error string `json:"Error"`
	// Time is when hmnfd gave up on it.
	Time time.Time `json:"Time"`
	// SCN is the body that was refused.
	SCN json.RawMessage `json:"SCN"`
}

// DeadLetterList is the body of GET /hmi/v2/deadletters.
type DeadLetterList struct {
	DeadLetters []DeadLetter `json:"DeadLetters"`
}

// deadLetter sets p aside after its subscriber refused it for good: stored,
// counted, logged once, and dropped from the queue so the next SCN goes out.
// False when it could not be stored (the caller retries the delivery later).
func (sd *sender) deadLetter(ctx context.Context, p pending, refusal error) bool {
	now := sd.svc.cfg.Now()
	err := sd.svc.store.addDeadLetter(ctx, redact.URL(sd.url), refusal.Error(), now, p.payload, now.Add(-sd.svc.cfg.DeadLetterAge))
	if err != nil {
		if ctx.Err() == nil {
			sd.svc.log.Error("dead_letter_store_failed", "subscriber", redact.URL(sd.url), "err", err)
		}
		return false
	}
	sd.deadLetters.Inc()
	sd.svc.log.Warn("delivery_dead_lettered", "subscriber", redact.URL(sd.url), "seq", p.scn.Seq,
		"components", len(p.scn.Components), "err", refusal)
	sd.drop([]pending{p})
	return true
}

// addDeadLetter stores a refused delivery and drops the dead letters set
// aside before oldest and the oldest beyond deadLetterKeep.
func (s *Store) addDeadLetter(ctx context.Context, url, why string, at time.Time, body []byte, oldest time.Time) error {
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		err := sqldb.InsertCapped(ctx, tx, "deadletters", deadLetterKeep,
			`INSERT INTO deadletters (url, error, created, body) VALUES (?, ?, ?, ?)`, url, why, at.UnixNano(), string(body))
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM deadletters WHERE created < ?`, oldest.UnixNano())
		return err
	})
}

// pruneDeadLetters drops the dead letters set aside before oldest.
func (s *Store) pruneDeadLetters(ctx context.Context, oldest time.Time) error {
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM deadletters WHERE created < ?`, oldest.UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("drop old dead letters: %w", err)
	}
	return nil
}

// DeadLetters returns the dead letters set aside since oldest, oldest first
// (older ones are deleted with the next dead letter or at the next start).
func (s *Store) DeadLetters(ctx context.Context, oldest time.Time) ([]DeadLetter, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT id, url, error, created, body FROM deadletters WHERE created >= ? ORDER BY id`,
		oldest.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("read dead letters: %w", err)
	}
	defer rows.Close()
	out := []DeadLetter{}
	for rows.Next() {
		var d DeadLetter
		var at int64
		var body string
		if err := rows.Scan(&d.ID, &d.Url, &d.Error, &at, &body); err != nil {
			return nil, fmt.Errorf("read dead letters: %w", err)
		}
		d.Time, d.SCN = time.Unix(0, at).UTC(), json.RawMessage(body)
		out = append(out, d)
	}
	return out, rows.Err()
}

func (a *API) deadLetters(w http.ResponseWriter, r *http.Request) {
	dl, err := a.svc.store.DeadLetters(r.Context(), a.svc.cfg.Now().Add(-a.svc.cfg.DeadLetterAge))
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, DeadLetterList{DeadLetters: dl})
}

// deleteDeadLetters deletes the dead letters listed since oldest: the one
// numbered id, or every one when all is true (then also the older ones,
// which are no longer listed). Deleting one that is not listed is an
// ErrNotFound.
func (s *Store) deleteDeadLetters(ctx context.Context, id int64, all bool, oldest time.Time) error {
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		if all {
			_, err := tx.ExecContext(ctx, `DELETE FROM deadletters`)
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM deadletters WHERE id = ? AND created >= ?`, id, oldest.UnixNano())
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return cmp.Or(err, problem.NotFoundf("no dead letter %d", id))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete dead letters: %w", err)
	}
	return nil
}

func (a *API) deleteDeadLetters(w http.ResponseWriter, r *http.Request) {
	var id int64
	all := r.PathValue("id") == ""
	if !all {
		var err error
		if id, err = strconv.ParseInt(r.PathValue("id"), 10, 64); err != nil || id <= 0 {
			a.fail(w, r, problem.Invalidf("id: %q is not a dead letter number", r.PathValue("id")))
			return
		}
	}
	if err := a.svc.store.deleteDeadLetters(r.Context(), id, all, a.svc.cfg.Now().Add(-a.svc.cfg.DeadLetterAge)); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
