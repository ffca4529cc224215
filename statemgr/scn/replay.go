package scn

import (
	"context"
	"database/sql"
	"fmt"
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
// subscriber: after the newest SCN, or before the first one while
// replaying for a daemon that subscribes again (Restores).
func (s *Store) startCursor(ctx context.Context, tx *sql.Tx, id int64, subscriber string) error {
	var err error
	if Restores(subscriber) && s.replaying() {
		_, err = tx.ExecContext(ctx, `INSERT INTO scn_cursors (name, seq) VALUES (?, 0)`, subCursor(id))
	} else {
		_, err = tx.ExecContext(ctx, `INSERT INTO scn_cursors (name, seq) SELECT ?, COALESCE(MAX(m), 0) FROM (
			SELECT MAX(seq) AS m FROM scn_outbox UNION ALL SELECT MAX(seq) FROM scn_cursors) AS t`, subCursor(id))
	}
	if err != nil {
		return fmt.Errorf("store subscription cursor: %w", err)
	}
	return nil
}
