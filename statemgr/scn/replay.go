package scn

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// NewDatabaseReplay is how long after its database was created (the SCN
// Epoch) HSM gives a new subscription of our daemons every SCN of the
// database so far, and keeps the outbox rows for it.
//
// An hsm restarted on an empty database holds no subscription, and a
// holder only learns so at its next check (client.Hold, hmnfd: every
// client.DefaultHoldCheck, retried within 30 s while hsm does not
// answer, each try bounded to 30 s): the SCNs committed meanwhile were
// sent to nobody, and only HSM has them. The holders subscribe again
// within about two minutes; such a subscription starts from the
// database's first SCN, so they get those SCNs late instead of never. A
// daemon subscribing for the first time then gets the SCNs of the new
// database's first minutes too, which at-least-once delivery allows (our
// daemons dedupe by Epoch and Seq). Other subscribers (CSM's hmnfd
// <pod>_<n>, scripts) do not subscribe again and keep HSM's "from now
// on".
const NewDatabaseReplay = 5 * time.Minute

// replaying reports whether the database is young enough for new
// subscriptions of our daemons to start from its first SCN.
// (A clock set back behind the epoch is not young: it would hold every
// compaction until it caught up.)
func (s *Store) replaying() bool {
	age := s.now().Sub(s.epoch)
	return age >= 0 && age < NewDatabaseReplay
}

// startCursor creates the outbox cursor of a new subscription id of
// subscriber: after the newest SCN, except for our daemons (Restores),
// whose cursor starts at the earliest of
//   - before the database's first SCN while replaying (an hsm restarted on
//     an empty database, see NewDatabaseReplay);
//   - the oldest cursor of the subscriptions of the same agent@host on
//     other ports (siblingsCursor): a daemon moved to another port gets
//     the SCNs committed between its stop and its new subscription, which
//     went to its old port's subscription only; a live second instance on
//     that host gets repeats, which it dedupes by Epoch and Seq;
//
// never before what the outbox still holds (the rows before are gone, and
// would be counted missed).
func (s *Store) startCursor(ctx context.Context, tx *sql.Tx, id int64, subscriber string) error {
	var newest int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(m), 0) FROM (SELECT MAX(seq) AS m FROM scn_outbox
		UNION ALL SELECT MAX(seq) FROM scn_cursors) AS t`).Scan(&newest); err != nil {
		return fmt.Errorf("read newest scn: %w", err)
	}
	start := newest
	if Restores(subscriber) {
		if s.replaying() {
			start = 0
		} else if seq, ok, err := siblingsCursor(ctx, tx, id, subscriber); err != nil {
			return err
		} else if ok {
			start = min(start, seq)
		}
	}
	if start < newest {
		var low sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT MIN(seq) FROM scn_outbox`).Scan(&low); err != nil {
			return fmt.Errorf("read oldest scn: %w", err)
		}
		if low.Valid {
			start = max(start, low.Int64-1)
		} else {
			start = newest
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO scn_cursors (name, seq) VALUES (?, ?)`, subCursor(id), start); err != nil {
		return fmt.Errorf("store subscription cursor: %w", err)
	}
	return nil
}

// siblingsCursor returns the oldest cursor of the subscriptions other than
// id whose Subscriber is subscriber's agent@host with another port; false
// when there is none.
func siblingsCursor(ctx context.Context, tx *sql.Tx, id int64, subscriber string) (int64, bool, error) {
	host := agentHost(subscriber)
	rows, err := tx.QueryContext(ctx, `SELECT id, subscriber FROM scn_subscriptions WHERE id <> ?`, id)
	if err != nil {
		return 0, false, fmt.Errorf("read subscriptions: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var sid int64
		var name string
		if err := rows.Scan(&sid, &name); err != nil {
			rows.Close()
			return 0, false, fmt.Errorf("read subscriptions: %w", err)
		}
		if name != subscriber && Restores(name) && agentHost(name) == host {
			ids = append(ids, sid)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, false, fmt.Errorf("read subscriptions: %w", err)
	}
	var oldest int64
	found := false
	for _, sid := range ids {
		var seq int64
		err := tx.QueryRowContext(ctx, `SELECT seq FROM scn_cursors WHERE name = ?`, subCursor(sid)).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return 0, false, fmt.Errorf("read subscription %d cursor: %w", sid, err)
		}
		if !found || seq < oldest {
			oldest, found = seq, true
		}
	}
	return oldest, found, nil
}

// agentHost returns the agent@host of a Restores subscriber (its name
// without the port).
func agentHost(subscriber string) string {
	return subscriber[:strings.LastIndexByte(subscriber, ':')]
}
