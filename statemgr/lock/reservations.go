package lock

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// glKeyBytes is the entropy of a reservation or deputy key.
const glKeyBytes = 16

// glHash is how keys are stored: hex SHA-256. Keys carry 128 random bits, so an
// unsalted hash is enough to make a leaked database useless for taking over a
// reservation.
func glHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// glNewKeys returns a fresh reservation key and deputy key for each id, from
// crypto/rand, in the form "<xname>:rk:<hex>" and "<xname>:dk:<hex>".
func glNewKeys(ids []string) (rks, dks []string, err error) {
	buf := make([]byte, 2*glKeyBytes*len(ids))
	if _, err := rand.Read(buf); err != nil {
		return nil, nil, fmt.Errorf("generate reservation keys: %w", err)
	}
	rks, dks = make([]string, len(ids)), make([]string, len(ids))
	for i, id := range ids {
		b := buf[2*glKeyBytes*i:]
		rks[i] = id + ":rk:" + hex.EncodeToString(b[:glKeyBytes])
		dks[i] = id + ":dk:" + hex.EncodeToString(b[glKeyBytes:2*glKeyBytes])
	}
	return rks, dks, nil
}

// glInsertReservations reserves ids (already checked to be free) and returns their
// keys. Service reservations expire after dur; admin ones never do. An expired
// reservation the reaper has not deleted yet is replaced.
func glInsertReservations(ctx context.Context, tx *sql.Tx, ids []string, now time.Time, dur time.Duration, expire bool) ([]hsm.ReservationKeys, error) {
	rks, dks, err := glNewKeys(ids)
	if err != nil {
		return nil, err
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO reservations (component_id, created_at, expires_at, reservation_key_hash, deputy_key_hash)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (component_id) DO UPDATE SET created_at = excluded.created_at,
		expires_at = excluded.expires_at, reservation_key_hash = excluded.reservation_key_hash, deputy_key_hash = excluded.deputy_key_hash`)
	if err != nil {
		return nil, fmt.Errorf("create reservations: %w", err)
	}
	defer stmt.Close()
	var exp *time.Time
	var expArg any
	if expire {
		e := time.UnixMilli(now.Add(dur).UnixMilli()).UTC()
		exp, expArg = &e, e.UnixMilli()
	}
	out := make([]hsm.ReservationKeys, len(ids))
	for i, id := range ids {
		if _, err := stmt.ExecContext(ctx, id, now.UnixMilli(), expArg, glHash(rks[i]), glHash(dks[i])); err != nil {
			return nil, fmt.Errorf("reserve %s: %w", id, err)
		}
		out[i] = hsm.ReservationKeys{ID: id, ReservationKey: rks[i], DeputyKey: dks[i], ExpirationTime: exp}
	}
	return out, nil
}

// glParseKeys validates a list of {ID, Key}, normalising IDs and dropping repeats.
func glParseKeys(field string, keys []hsm.KeyedID) ([]hsm.KeyedID, error) {
	out := make([]hsm.KeyedID, 0, len(keys))
	seen := map[string]bool{}
	for i, k := range keys {
		ids, err := core.Xnames(fmt.Sprintf("%s[%d].ID", field, i), []string{k.ID})
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(k.Key) == "" {
			return nil, problem.Invalidf("%s[%d].Key: must not be empty", field, i)
		}
		if !seen[ids[0]] {
			seen[ids[0]] = true
			out = append(out, hsm.KeyedID{ID: ids[0], Key: k.Key})
		}
	}
	if len(out) == 0 {
		return nil, problem.Invalidf("%s: must list at least one component and key", field)
	}
	return out, nil
}

// glActive is an unexpired reservation as the key operations see it.
type glActive struct {
	rkHash, dkHash string
	expires        sql.NullInt64
}

// glActiveReservations returns the unexpired reservations of the components in keys.
func glActiveReservations(ctx context.Context, q core.Queryer, keys []hsm.KeyedID, now time.Time) (map[string]glActive, error) {
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = k.ID
	}
	out := make(map[string]glActive, len(ids))
	for _, c := range core.Chunks(ids) {
		rows, err := q.QueryContext(ctx, `SELECT component_id, reservation_key_hash, deputy_key_hash, expires_at FROM reservations
			WHERE (expires_at IS NULL OR expires_at > ?) AND component_id IN (`+core.Placeholders(len(c))+`)`, core.Args([]any{now.UnixMilli()}, c)...)
		if err != nil {
			return nil, fmt.Errorf("read reservations: %w", err)
		}
		for rows.Next() {
			var id string
			var a glActive
			if err := rows.Scan(&id, &a.rkHash, &a.dkHash, &a.expires); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read reservations: %w", err)
			}
			out[id] = a
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, fmt.Errorf("read reservations: %w", err)
		}
	}
	return out, nil
}

// glKeyMatches compares a presented key with a stored hash in constant time.
func glKeyMatches(key, hash string) bool {
	return subtle.ConstantTimeCompare([]byte(glHash(key)), []byte(hash)) == 1
}

// runKeyOp releases or renews the reservations whose reservation keys match.
// A component without an unexpired reservation under that key fails as NotFound.
func (s *Store) runKeyOp(ctx context.Context, op glOp, keys []hsm.KeyedID, model string, dur time.Duration) (glOpResult, error) {
	s.resvMu.Lock()
	defer s.resvMu.Unlock()
	var res glOpResult
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		now := s.now()
		res = glOpResult{total: len(keys), at: now}
		active, err := glActiveReservations(ctx, tx, keys, now)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if a, ok := active[k.ID]; ok && glKeyMatches(k.Key, a.rkHash) {
				res.ok = append(res.ok, k.ID)
			} else {
				res.failed = append(res.failed, hsm.FailedID{ID: k.ID, Reason: hsm.ReasonNotFound})
			}
		}
		if model == hsm.ModelRigid && len(res.failed) > 0 {
			return glRigidError("ReservationKeys", res)
		}
		if op == opRelease {
			return glDeleteReservations(ctx, tx, res.ok)
		}
		exp := now.Add(dur).UnixMilli()
		for _, c := range core.Chunks(res.ok) {
			if _, err := tx.ExecContext(ctx, `UPDATE reservations SET expires_at = ? WHERE expires_at IS NOT NULL AND component_id IN (`+
				core.Placeholders(len(c))+`)`, core.Args([]any{exp}, c)...); err != nil {
				return fmt.Errorf("renew reservations: %w", err)
			}
		}
		return nil
	})
	switch {
	case err != nil:
	case op == opRelease:
		s.rx.Dropped(res.ok)
	default:
		s.rx.Renewed(res.ok, res.at.Add(dur).UnixMilli())
	}
	return res, err
}

// checkReservations reports which deputy keys belong to unexpired reservations.
func (s *Store) checkReservations(ctx context.Context, keys []hsm.KeyedID) (hsm.CheckResult, error) {
	active, err := glActiveReservations(ctx, s.db.R, keys, s.now())
	if err != nil {
		return hsm.CheckResult{}, err
	}
	out := hsm.CheckResult{Success: []hsm.DeputyCheck{}, Failure: []hsm.FailedID{}}
	for _, k := range keys {
		a, ok := active[k.ID]
		if !ok || !glKeyMatches(k.Key, a.dkHash) {
			out.Failure = append(out.Failure, hsm.FailedID{ID: k.ID, Reason: hsm.ReasonNotFound})
			continue
		}
		c := hsm.DeputyCheck{ID: k.ID, DeputyKey: k.Key}
		if a.expires.Valid {
			e := time.UnixMilli(a.expires.Int64).UTC()
			c.ExpirationTime = &e
		}
		out.Success = append(out.Success, c)
	}
	return out, nil
}

func (a *API) keyOp(op glOp) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req hsm.ReservationKeysRequest
		err := httpserver.ReadJSON(w, r, 0, &req)
		var model string
		if err == nil {
			model, err = glModel(req.ProcessingModel)
		}
		var dur time.Duration
		if err == nil && op == opRenew {
			dur, err = glDuration(req.ReservationDuration)
		}
		var keys []hsm.KeyedID
		if err == nil {
			keys, err = glParseKeys("ReservationKeys", req.ReservationKeys)
		}
		var res glOpResult
		if err == nil {
			res, err = a.store.runKeyOp(r.Context(), op, keys, model, dur)
		}
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		httpserver.WriteJSON(w, http.StatusOK, res.lockResult())
	}
}

func (a *API) checkReservations(w http.ResponseWriter, r *http.Request) {
	var req hsm.DeputyKeysRequest
	err := httpserver.ReadJSON(w, r, 0, &req)
	var keys []hsm.KeyedID
	if err == nil {
		keys, err = glParseKeys("DeputyKeys", req.DeputyKeys)
	}
	var out hsm.CheckResult
	if err == nil {
		out, err = a.store.checkReservations(r.Context(), keys)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, out)
}

// reapReservations deletes the reservations that expired at or before now and
// returns how many it deleted.
func (s *Store) reapReservations(ctx context.Context) (int64, error) {
	s.resvMu.Lock()
	defer s.resvMu.Unlock()
	var n int64
	now := s.now().UnixMilli()
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM reservations WHERE expires_at IS NOT NULL AND expires_at <= ?`, now)
		if err != nil {
			return fmt.Errorf("reap reservations: %w", err)
		}
		n, err = res.RowsAffected()
		return err
	})
	if err == nil {
		s.rx.Reaped(now)
	}
	return n, err
}

// RunReservationReaper deletes expired reservations every interval until ctx
// is done. Expired reservations are already ignored by every read and check, so
// the reaper only keeps the table small; a failed pass is logged and retried at
// the next tick.
func RunReservationReaper(ctx context.Context, s *Store, every time.Duration, log *slog.Logger) error {
	if every <= 0 {
		return fmt.Errorf("reservation reaper: interval %v must be positive", every)
	}
	core.OnTick(ctx, every, func() {
		n, err := s.reapReservations(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.WarnContext(ctx, "reservation_reap_failed", "err", err)
		case n > 0:
			log.InfoContext(ctx, "reservations_reaped", "count", n)
		}
	})
	return nil
}
