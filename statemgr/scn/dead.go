package scn

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/redact"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// failingSince returns when the deliveries to subscription id began failing
// (zero while they succeed).
func (s *Store) failingSince(ctx context.Context, id int64) (time.Time, error) {
	var unix int64
	err := s.db.R.QueryRowContext(ctx, `SELECT failing_since FROM scn_subscriptions WHERE id = ?`, id).Scan(&unix)
	if err != nil {
		return time.Time{}, fmt.Errorf("read subscription %d failing since: %w", id, err)
	}
	return fromUnix(unix), nil
}

// setFailingSince records when the deliveries to subscription id began
// failing; the zero time records that they succeed again.
func (s *Store) setFailingSince(ctx context.Context, id int64, t time.Time) error {
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE scn_subscriptions SET failing_since = ? WHERE id = ?`, toUnix(t), id)
		if err != nil {
			return fmt.Errorf("store subscription %d failing since: %w", id, err)
		}
		return nil
	})
}

// dropDead deletes subscription id and its cursor if its deliveries are
// still failing since since (not replaced, nor delivered to, meanwhile).
func (s *Store) dropDead(ctx context.Context, id int64, since time.Time) (bool, error) {
	var n int64
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM scn_subscriptions WHERE id = ? AND failing_since = ?`, id, toUnix(since))
		if err != nil {
			return fmt.Errorf("drop subscription %d: %w", id, err)
		}
		if n, _ = res.RowsAffected(); n == 0 {
			return nil
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM scn_cursors WHERE name = ?`, subCursor(id))
		return err
	})
	if err != nil || n == 0 {
		return false, err
	}
	s.subs.Wake()
	return true, nil
}

func toUnix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func fromUnix(u int64) time.Time {
	if u == 0 {
		return time.Time{}
	}
	return time.Unix(u, 0)
}

// failing is the delivery record of one subscription's worker.
type failing struct{ since time.Time }

// failed notes a failed post to sub and reports whether sub is to be
// dropped: its deliveries have failed, without a success, for DeadAfter.
func (r *Relay) failed(ctx context.Context, sub hsm.Subscription, f *failing) bool {
	now := r.store.now()
	if f.since.IsZero() {
		// Whole seconds, as stored, so dropDead finds the same value.
		f.since = time.Unix(now.Unix(), 0)
		if err := r.store.setFailingSince(ctx, sub.ID, f.since); err != nil && ctx.Err() == nil {
			r.cfg.Log.WarnContext(ctx, "scn_failing_since_store_failed", "subscription", sub.ID, "err", err)
		}
		return false
	}
	return r.cfg.DeadAfter > 0 && Restores(sub.Subscriber) && now.Sub(f.since) >= r.cfg.DeadAfter
}

// Restores reports whether subscriber names a daemon of this suite that
// checks its subscription and subscribes again when it is gone: the
// agent@host:port form of client.SubscriberName (bss, bos, hbtd, hmnfd).
// Only those are dropped after DeadAfter. Shipped HSM never deletes a
// subscription, and other clients (CSM's hmnfd, <pod>_<n>; scripts that
// subscribe as agent@host, the spec's form) subscribe once: dropping theirs
// would stop their SCNs for good once their callback came back (review-5).
func Restores(subscriber string) bool {
	at := strings.LastIndexByte(subscriber, '@')
	if at <= 0 {
		return false
	}
	_, port, err := net.SplitHostPort(subscriber[at+1:])
	if err != nil || port == "" {
		return false
	}
	_, err = strconv.ParseUint(port, 10, 16)
	return err == nil
}

// succeeded notes that sub answered (took the SCN or refused it for good).
func (r *Relay) succeeded(ctx context.Context, sub hsm.Subscription, f *failing) {
	if f.since.IsZero() {
		return
	}
	f.since = time.Time{}
	if err := r.store.setFailingSince(ctx, sub.ID, f.since); err != nil && ctx.Err() == nil {
		r.cfg.Log.WarnContext(ctx, "scn_failing_since_store_failed", "subscription", sub.ID, "err", err)
	}
}

// drop deletes sub, whose deliveries have failed for DeadAfter, with its
// outbox cursor; true when it did (false: sub changed meanwhile, and its
// record is read again).
func (r *Relay) drop(ctx context.Context, sub hsm.Subscription, f *failing) bool {
	ok, err := r.store.dropDead(ctx, sub.ID, f.since)
	if err != nil || !ok {
		if err != nil && ctx.Err() == nil {
			r.cfg.Log.WarnContext(ctx, "scn_subscription_drop_failed", "subscription", sub.ID, "err", err)
		}
		if since, err := r.store.failingSince(ctx, sub.ID); err == nil {
			f.since = since
		}
		return false
	}
	r.m.dropped.Inc()
	r.cfg.Log.WarnContext(ctx, "scn_subscription_dropped", "subscription", sub.ID, "subscriber", sub.Subscriber,
		"url", redact.URL(sub.Url), "failing_since", f.since, "dead_after", r.cfg.DeadAfter)
	return true
}
