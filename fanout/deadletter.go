package fanout

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/redact"
	"github.com/hmsuite/hms/internal/sqldb"
)

// deadLetterKeep is how many dead letters are kept: the newest ones.
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
	err := sd.svc.store.addDeadLetter(ctx, redact.URL(sd.url), refusal.Error(), sd.svc.cfg.Now(), p.payload)
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

// addDeadLetter stores a refused delivery and drops the oldest dead letters
// beyond deadLetterKeep.
func (s *Store) addDeadLetter(ctx context.Context, url, why string, at time.Time, body []byte) error {
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		return sqldb.InsertCapped(ctx, tx, "deadletters", deadLetterKeep,
			`INSERT INTO deadletters (url, error, created, body) VALUES (?, ?, ?, ?)`, url, why, at.UnixNano(), string(body))
	})
}

// DeadLetters returns the stored dead letters, oldest first.
func (s *Store) DeadLetters(ctx context.Context) ([]DeadLetter, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT id, url, error, created, body FROM deadletters ORDER BY id`)
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
	dl, err := a.svc.store.DeadLetters(r.Context())
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, DeadLetterList{DeadLetters: dl})
}
