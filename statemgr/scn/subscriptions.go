// Package scn serves HSM's /Subscriptions/SCN and delivers the state-change
// notifications of the outbox: to the bus and to each HTTP subscriber, with
// refused ones kept as dead letters.
package scn

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// Store is the SCN subscriptions and dead letters, over the shared core
// (whose outbox the relay reads).
type Store struct {
	core  coreOutbox
	db    *sqldb.DB
	now   func() time.Time
	epoch time.Time // the database's creation (its SCNs' Epoch)
	vocab *core.Vocab
	// outbox wakes the relay when SCNs are appended; subs when subscriptions change.
	outbox, subs *core.Signal
}

// coreOutbox is what the SCN relay uses of the shared core's outbox.
type coreOutbox interface {
	OutboxAfter(ctx context.Context, after int64, limit int) ([]core.OutboxRow, error)
	OutboxLen(ctx context.Context) (int64, error)
	CompactOutbox(ctx context.Context, keepSince time.Time) (expired int64, err error)
	Cursor(ctx context.Context, name string) (int64, error)
	SetCursor(ctx context.Context, name string, seq int64) error
}

// NewStore returns the subscriptions kept in c's database.
func NewStore(c *core.Store) *Store {
	return &Store{core: c, db: c.DB, now: c.Now, epoch: time.Unix(0, c.Epoch), vocab: c.Vocab(), outbox: c.Outbox, subs: c.Subs}
}

// normSubscription validates s with HSM's messages and canonicalises its
// States. Roles and SubRoles are kept as sent, as HSM echoes them; matching
// ignores case anyway.
func normSubscription(s *hsm.Subscription, vs *core.VocabSet) error {
	if err := httpserver.CheckText("Subscriber", s.Subscriber); err != nil {
		return err
	}
	if strings.TrimSpace(s.Subscriber) == "" {
		return problem.Invalidf("Missing name of subscriber")
	}
	if s.Url == "" {
		return problem.Invalidf("Missing url")
	}
	// HSM takes any non-empty Url; one the relay cannot post to is refused here.
	u, err := url.Parse(s.Url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return problem.Invalidf("Url: %q is not an http(s) URL", s.Url)
	}
	if err := checkLists(vs, s.States, s.Roles, s.SubRoles, s.SoftwareStatus); err != nil {
		return err
	}
	if !hasTrigger(s) {
		return problem.Invalidf("Missing trigger. Must subscribe to atleast one Enabled, Role, SubRole, SoftwareStatus, or State trigger.")
	}
	return nil
}

// hasTrigger reports whether s can match any SCN.
func hasTrigger(s *hsm.Subscription) bool {
	return (s.Enabled != nil && *s.Enabled) || len(s.Roles) > 0 || len(s.SubRoles) > 0 ||
		len(s.SoftwareStatus) > 0 || len(s.States) > 0
}

// checkLists validates the trigger lists with HSM's messages and
// canonicalises the states.
func checkLists(vs *core.VocabSet, states, roles, subRoles, sw []string) error {
	for _, v := range roles {
		if _, ok := vs.Roles.Normalize(v); !ok {
			return problem.Invalidf("Invalid role '%s'", v)
		}
	}
	for _, v := range subRoles {
		if _, ok := vs.SubRoles.Normalize(v); !ok {
			return problem.Invalidf("Invalid subRole '%s'", v)
		}
	}
	if slices.Contains(sw, "") {
		return problem.Invalidf("SoftwareStatus can not be an empty string")
	}
	for i, v := range states {
		n, ok := hsm.States.Normalize(v)
		if !ok {
			return problem.Invalidf("Invalid state '%s'", v)
		}
		states[i] = n
	}
	return nil
}

// parseSubscriptionID parses the {id} of /Subscriptions/SCN/{id}: an integer
// of at least 1, else ErrInvalid with HSM's "Invalid id - %s".
func parseSubscriptionID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, problem.Invalidf("Invalid id - %s", s)
	}
	return id, nil
}

// errNoSubscription is HSM's 404 for an unknown subscription ID.
func errNoSubscription() error { return problem.NotFoundf("Subscription not found") }

// subscriptions returns every subscription; nil when there is none.
func (s *Store) subscriptions(ctx context.Context) ([]hsm.Subscription, error) {
	return s.querySubs(ctx, `SELECT id, subscriber, url, enabled, roles, sub_roles, software_status, states
		FROM scn_subscriptions ORDER BY id`)
}

// subscription returns the subscription with the given ID.
func (s *Store) subscription(ctx context.Context, id int64) (hsm.Subscription, error) {
	subs, err := s.querySubs(ctx, `SELECT id, subscriber, url, enabled, roles, sub_roles, software_status, states
		FROM scn_subscriptions WHERE id = ?`, id)
	if err != nil {
		return hsm.Subscription{}, err
	}
	if len(subs) == 0 {
		return hsm.Subscription{}, errNoSubscription()
	}
	return subs[0], nil
}

func (s *Store) querySubs(ctx context.Context, q string, args ...any) ([]hsm.Subscription, error) {
	rows, err := s.db.R.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read subscriptions: %w", err)
	}
	defer rows.Close()
	var out []hsm.Subscription
	for rows.Next() {
		var sub hsm.Subscription
		var en sql.NullBool
		var lists [4]string
		if err := rows.Scan(&sub.ID, &sub.Subscriber, &sub.Url, &en, &lists[0], &lists[1], &lists[2], &lists[3]); err != nil {
			return nil, fmt.Errorf("read subscriptions: %w", err)
		}
		if en.Valid {
			sub.Enabled = &en.Bool
		}
		for i, dst := range []*[]string{&sub.Roles, &sub.SubRoles, &sub.SoftwareStatus, &sub.States} {
			if err := json.Unmarshal([]byte(lists[i]), dst); err != nil {
				return nil, fmt.Errorf("decode subscription %d: %w", sub.ID, err)
			}
		}
		out = append(out, sub)
	}
	return out, rows.Err()
}

func listJSON(l []string) string {
	if l == nil {
		l = []string{}
	}
	b, _ := json.Marshal(l)
	return string(b)
}

// CreateSubscription stores sub and returns it with its ID. It receives every
// SCN committed after this call returns (of our daemons, also earlier ones:
// see startCursor); the same Subscriber and Url twice is
// ErrConflict. A Subscriber of the agent@host form (what bss, bos, hbtd and
// hmnfd send, with the callback's port: client.SubscriberName) names one
// callback: when it comes back with another Url (a daemon whose name
// carries no port restarted on a new one, a callback path changed), its
// subscription is replaced in place -
// ID, and outbox cursor, kept, so the SCNs the old Url missed go to the new
// one - instead of a second one being added beside it while the first
// retries a dead address. HSM's spec says a POST "will not affect the
// existing subscriptions"; shipped HSM has no outbox, so the stale one there
// only costs three tries per SCN, where here it would be retried forever and
// keep -scn-retention of outbox rows. Other
// Subscribers (CSM hmnfd's "<pod>_<n>") keep HSM's behaviour.
func (s *Store) CreateSubscription(ctx context.Context, sub hsm.Subscription) (hsm.Subscription, error) {
	if err := normSubscription(&sub, s.vocab.Get()); err != nil {
		return sub, err
	}
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM scn_subscriptions WHERE subscriber = ? AND url = ?`,
			sub.Subscriber, sub.Url).Scan(&n); err != nil {
			return fmt.Errorf("check subscription: %w", err)
		}
		if n > 0 {
			return problem.Conflictf("Url: %s already subscribed as %s", sub.Url, sub.Subscriber)
		}
		if strings.Contains(sub.Subscriber, "@") {
			replaced, err := s.replaceMoved(ctx, tx, &sub)
			if err != nil || replaced {
				return err
			}
		}
		var en any
		if sub.Enabled != nil {
			en = *sub.Enabled
		}
		if err := tx.QueryRowContext(ctx, `INSERT INTO scn_subscriptions (subscriber, url, enabled, roles, sub_roles,
			software_status, states) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`, sub.Subscriber, sub.Url, en,
			listJSON(sub.Roles), listJSON(sub.SubRoles), listJSON(sub.SoftwareStatus), listJSON(sub.States)).Scan(&sub.ID); err != nil {
			return fmt.Errorf("store subscription: %w", err)
		}
		return s.startCursor(ctx, tx, sub.ID, sub.Subscriber)
	})
	if err != nil {
		return sub, err
	}
	s.subs.Wake()
	return sub, nil
}

// replaceMoved overwrites the oldest subscription of sub.Subscriber (whose
// Url differs from sub's) with sub, sets sub.ID to it, and deletes any other
// of that Subscriber with their cursors; false when it has none.
func (s *Store) replaceMoved(ctx context.Context, tx *sql.Tx, sub *hsm.Subscription) (bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id FROM scn_subscriptions WHERE subscriber = ? ORDER BY id`, sub.Subscriber)
	if err != nil {
		return false, fmt.Errorf("check subscription: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return false, fmt.Errorf("check subscription: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return false, err
	}
	sub.ID = ids[0]
	var en any
	if sub.Enabled != nil {
		en = *sub.Enabled
	}
	if _, err := tx.ExecContext(ctx, `UPDATE scn_subscriptions SET url = ?, enabled = ?, roles = ?, sub_roles = ?,
		software_status = ?, states = ?, failing_since = 0 WHERE id = ?`, sub.Url, en, listJSON(sub.Roles),
		listJSON(sub.SubRoles), listJSON(sub.SoftwareStatus), listJSON(sub.States), sub.ID); err != nil {
		return false, fmt.Errorf("replace subscription %d: %w", sub.ID, err)
	}
	for _, id := range ids[1:] {
		if err := deleteSub(ctx, tx, id); err != nil {
			return false, err
		}
	}
	return true, nil
}

func subCursor(id int64) string { return "sub:" + strconv.FormatInt(id, 10) }

// replaceSubscription overwrites subscription id with sub, keeping its cursor.
func (s *Store) replaceSubscription(ctx context.Context, id int64, sub hsm.Subscription) (hsm.Subscription, error) {
	if err := normSubscription(&sub, s.vocab.Get()); err != nil {
		return sub, err
	}
	if _, err := s.subscription(ctx, id); err != nil {
		return sub, err
	}
	sub.ID = id
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		var en any
		if sub.Enabled != nil {
			en = *sub.Enabled
		}
		// A new Url starts with a clean record (see Relay's DeadAfter).
		_, err := tx.ExecContext(ctx, `UPDATE scn_subscriptions SET subscriber = ?, url = ?, enabled = ?, roles = ?,
			sub_roles = ?, software_status = ?, states = ?, failing_since = CASE WHEN url = ? THEN failing_since ELSE 0 END
			WHERE id = ?`, sub.Subscriber, sub.Url, en,
			listJSON(sub.Roles), listJSON(sub.SubRoles), listJSON(sub.SoftwareStatus), listJSON(sub.States), sub.Url, id)
		if err != nil {
			return fmt.Errorf("update subscription %d: %w", id, err)
		}
		return nil
	})
	if err == nil {
		s.subs.Wake()
	}
	return sub, err
}

// patchSubscription adds, removes or replaces filter values of subscription
// id; the lists p leaves out stay as they are.
func (s *Store) patchSubscription(ctx context.Context, id int64, p hsm.SubscriptionPatch) (hsm.Subscription, error) {
	op := strings.ToLower(p.Op)
	switch {
	case p.Op == "":
		return hsm.Subscription{}, problem.Invalidf("Missing Patch Op")
	case op != "add" && op != "remove" && op != "replace":
		return hsm.Subscription{}, problem.Invalidf("Invalid Patch Op - %s", p.Op)
	}
	deref := func(l *[]string) []string {
		if l == nil {
			return nil
		}
		return *l
	}
	if err := checkLists(s.vocab.Get(), deref(p.States), deref(p.Roles), deref(p.SubRoles), deref(p.SoftwareStatus)); err != nil {
		return hsm.Subscription{}, err
	}
	sub, err := s.subscription(ctx, id)
	if err != nil {
		return sub, err
	}
	pairs := [][2]*[]string{{&sub.Roles, p.Roles}, {&sub.SubRoles, p.SubRoles},
		{&sub.SoftwareStatus, p.SoftwareStatus}, {&sub.States, p.States}}
	for _, pr := range pairs {
		if pr[1] != nil {
			patchList(op, pr[0], *pr[1])
		}
	}
	if p.Enabled != nil {
		sub.Enabled = p.Enabled
	}
	if !hasTrigger(&sub) {
		return sub, problem.Invalidf("Missing trigger. Subscriptions must have atleast one Enabled, Role, SubRole, SoftwareStatus, or State trigger.")
	}
	return s.replaceSubscription(ctx, id, sub)
}

// patchList applies one PATCH op ("add", "remove", "replace") to cur.
func patchList(op string, cur *[]string, in []string) {
	switch op {
	case "add":
		for _, v := range in {
			if !slices.Contains(*cur, v) {
				*cur = append(*cur, v)
			}
		}
	case "remove":
		*cur = slices.DeleteFunc(*cur, func(v string) bool { return slices.Contains(in, v) })
	case "replace":
		*cur = in
	}
}

// DeleteSubscription deletes subscription id, or all of them when id is 0,
// and returns how many it deleted.
func (s *Store) DeleteSubscription(ctx context.Context, id int64) (int64, error) {
	var n int64
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		if id == 0 {
			res, err := tx.ExecContext(ctx, `DELETE FROM scn_subscriptions`)
			if err != nil {
				return fmt.Errorf("delete subscriptions: %w", err)
			}
			n, _ = res.RowsAffected()
			_, err = tx.ExecContext(ctx, `DELETE FROM scn_cursors WHERE name LIKE 'sub:%'`)
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM scn_subscriptions WHERE id = ?`, id)
		if err != nil {
			return fmt.Errorf("delete subscription %d: %w", id, err)
		}
		if n, _ = res.RowsAffected(); n == 0 {
			return errNoSubscription()
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM scn_cursors WHERE name = ?`, subCursor(id))
		return err
	})
	if err == nil {
		s.subs.Wake()
	}
	return n, err
}

// deleteSub deletes subscription id and its cursor in tx.
func deleteSub(ctx context.Context, tx *sql.Tx, id int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM scn_subscriptions WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete subscription %d: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM scn_cursors WHERE name = ?`, subCursor(id)); err != nil {
		return fmt.Errorf("delete subscription %d cursor: %w", id, err)
	}
	return nil
}
