package statemgr

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// normSubscription validates s and canonicalises its enum lists.
func normSubscription(s *hsm.Subscription, vs *vocabSet) error {
	if strings.TrimSpace(s.Subscriber) == "" {
		return problem.Invalidf("Subscriber: required")
	}
	u, err := url.Parse(s.Url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return problem.Invalidf("Url: %q is not an http(s) URL", s.Url)
	}
	return normLists(vs, &s.States, &s.Roles, &s.SubRoles)
}

func normLists(vs *vocabSet, states, roles, subRoles *[]string) error {
	for _, l := range []struct {
		e    *hsm.Enum
		list *[]string
	}{{&hsm.States, states}, {&vs.roles, roles}, {&vs.subRoles, subRoles}} {
		for i, v := range *l.list {
			n, ok := l.e.Normalize(v)
			if !ok {
				return problem.Invalidf("%ss[%d]: invalid value %q", l.e.Field, i, v)
			}
			(*l.list)[i] = n
		}
	}
	return nil
}

// Subscriptions returns every subscription.
func (s *Store) Subscriptions(ctx context.Context) ([]hsm.Subscription, error) {
	return s.querySubs(ctx, `SELECT id, subscriber, url, enabled, roles, sub_roles, software_status, states
		FROM scn_subscriptions ORDER BY id`)
}

// Subscription returns the subscription with the given ID.
func (s *Store) Subscription(ctx context.Context, id string) (hsm.Subscription, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return hsm.Subscription{}, problem.NotFoundf("subscription %q: none", id)
	}
	subs, err := s.querySubs(ctx, `SELECT id, subscriber, url, enabled, roles, sub_roles, software_status, states
		FROM scn_subscriptions WHERE id = ?`, n)
	if err != nil {
		return hsm.Subscription{}, err
	}
	if len(subs) == 0 {
		return hsm.Subscription{}, problem.NotFoundf("subscription %s: none", id)
	}
	return subs[0], nil
}

func (s *Store) querySubs(ctx context.Context, q string, args ...any) ([]hsm.Subscription, error) {
	rows, err := s.db.R.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read subscriptions: %w", err)
	}
	defer rows.Close()
	out := []hsm.Subscription{}
	for rows.Next() {
		var sub hsm.Subscription
		var id int64
		var en sql.NullBool
		var lists [4]string
		if err := rows.Scan(&id, &sub.Subscriber, &sub.Url, &en, &lists[0], &lists[1], &lists[2], &lists[3]); err != nil {
			return nil, fmt.Errorf("read subscriptions: %w", err)
		}
		sub.ID = strconv.FormatInt(id, 10)
		if en.Valid {
			sub.Enabled = &en.Bool
		}
		for i, dst := range []*[]string{&sub.Roles, &sub.SubRoles, &sub.SoftwareStatus, &sub.States} {
			if err := json.Unmarshal([]byte(lists[i]), dst); err != nil {
				return nil, fmt.Errorf("decode subscription %d: %w", id, err)
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
// SCN committed after this call returns; the same Subscriber and Url twice is
// ErrConflict.
func (s *Store) CreateSubscription(ctx context.Context, sub hsm.Subscription) (hsm.Subscription, error) {
	if err := normSubscription(&sub, s.vocab.get()); err != nil {
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
		var en any
		if sub.Enabled != nil {
			en = *sub.Enabled
		}
		var id int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO scn_subscriptions (subscriber, url, enabled, roles, sub_roles,
			software_status, states) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`, sub.Subscriber, sub.Url, en,
			listJSON(sub.Roles), listJSON(sub.SubRoles), listJSON(sub.SoftwareStatus), listJSON(sub.States)).Scan(&id); err != nil {
			return fmt.Errorf("store subscription: %w", err)
		}
		sub.ID = strconv.FormatInt(id, 10)
		_, err := tx.ExecContext(ctx, `INSERT INTO scn_cursors (name, seq) SELECT ?, COALESCE(MAX(m), 0) FROM (
			SELECT MAX(seq) AS m FROM scn_outbox UNION ALL SELECT MAX(seq) FROM scn_cursors) AS t`, subCursor(sub.ID))
		if err != nil {
			return fmt.Errorf("store subscription cursor: %w", err)
		}
		return nil
	})
	if err != nil {
		return sub, err
	}
	s.subs.wake()
	return sub, nil
}

func subCursor(id string) string { return "sub:" + id }

// ReplaceSubscription overwrites subscription id with sub, keeping its cursor.
func (s *Store) ReplaceSubscription(ctx context.Context, id string, sub hsm.Subscription) (hsm.Subscription, error) {
	if err := normSubscription(&sub, s.vocab.get()); err != nil {
		return sub, err
	}
	if _, err := s.Subscription(ctx, id); err != nil {
		return sub, err
	}
	sub.ID = id
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		var en any
		if sub.Enabled != nil {
			en = *sub.Enabled
		}
		_, err := tx.ExecContext(ctx, `UPDATE scn_subscriptions SET subscriber = ?, url = ?, enabled = ?, roles = ?,
			sub_roles = ?, software_status = ?, states = ? WHERE id = ?`, sub.Subscriber, sub.Url, en,
			listJSON(sub.Roles), listJSON(sub.SubRoles), listJSON(sub.SoftwareStatus), listJSON(sub.States), id)
		if err != nil {
			return fmt.Errorf("update subscription %s: %w", id, err)
		}
		return nil
	})
	if err == nil {
		s.subs.wake()
	}
	return sub, err
}

// PatchSubscription adds, removes or replaces filter values of subscription id.
func (s *Store) PatchSubscription(ctx context.Context, id string, p hsm.SubscriptionPatch) (hsm.Subscription, error) {
	if err := normLists(s.vocab.get(), &p.States, &p.Roles, &p.SubRoles); err != nil {
		return hsm.Subscription{}, err
	}
	sub, err := s.Subscription(ctx, id)
	if err != nil {
		return sub, err
	}
	op := strings.ToLower(p.Op)
	pairs := [][2]*[]string{{&sub.Roles, &p.Roles}, {&sub.SubRoles, &p.SubRoles},
		{&sub.SoftwareStatus, &p.SoftwareStatus}, {&sub.States, &p.States}}
	for _, pr := range pairs {
		cur, in := pr[0], *pr[1]
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
		default:
			return sub, problem.Invalidf("Op: %q is not add, remove or replace", p.Op)
		}
	}
	if p.Enabled != nil {
		sub.Enabled = p.Enabled
	}
	return s.ReplaceSubscription(ctx, id, sub)
}

// DeleteSubscription deletes subscription id, or all of them when id is "".
func (s *Store) DeleteSubscription(ctx context.Context, id string) error {
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		if id == "" {
			if _, err := tx.ExecContext(ctx, `DELETE FROM scn_subscriptions`); err != nil {
				return fmt.Errorf("delete subscriptions: %w", err)
			}
			_, err := tx.ExecContext(ctx, `DELETE FROM scn_cursors WHERE name LIKE 'sub:%'`)
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM scn_subscriptions WHERE id = ?`, id)
		if err != nil {
			return fmt.Errorf("delete subscription %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return problem.NotFoundf("subscription %s: none", id)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM scn_cursors WHERE name = ?`, subCursor(id))
		return err
	})
	if err == nil {
		s.subs.wake()
	}
	return err
}
