package fanout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/redact"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// Consume reads SCNs from topic as a member of group until ctx is cancelled.
// A batch is committed only after its deliveries are durably queued; a
// message that is not a valid SCN is logged, counted and skipped so it cannot
// stall the partition.
func (s *Service) Consume(ctx context.Context, c bus.Consumer, topic, group string) error {
	s.log.Info("bus_consumer_started", "topic", topic, "group", group)
	if err := c.Consume(ctx, topic, group, s.handleBatch); err != nil {
		return fmt.Errorf("consume %s: %w", topic, err)
	}
	return nil
}

func (s *Service) handleBatch(ctx context.Context, msgs []bus.Message) error {
	scns := make([]hsm.SCN, 0, len(msgs))
	for _, msg := range msgs {
		scn, err := DecodeSCN(msg.Value)
		if err != nil {
			s.m.malformed.Inc()
			s.log.Warn("bus_scn_malformed", "topic", msg.Topic, "partition", msg.Partition, "offset", msg.Offset, "err", err)
			continue
		}
		scns = append(scns, scn)
	}
	_, err := s.Enqueue(ctx, scns, "bus")
	return err
}

// DecodeSCN parses and checks one SCN: at least one component, every
// component a valid xname (normalised on the way).
func DecodeSCN(b []byte) (hsm.SCN, error) {
	var scn hsm.SCN
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&scn); err != nil {
		return hsm.SCN{}, problem.Invalidf("SCN: %v", err)
	}
	if dec.More() {
		return hsm.SCN{}, problem.Invalidf("SCN: unexpected data after the JSON value")
	}
	return scn, checkSCN(&scn)
}

// checkSCN requires at least one component and normalises every xname.
func checkSCN(scn *hsm.SCN) error {
	if len(scn.Components) == 0 {
		return problem.Invalidf("Components: an SCN needs at least one component")
	}
	for i, c := range scn.Components {
		x, err := xname.Parse(c)
		if err != nil {
			return problem.Invalidf("Components[%d]: %q is not a valid xname: %v", i, c, err)
		}
		scn.Components[i] = x.String()
	}
	// Attribute values are not checked: HSM may know states and roles this
	// build does not, and matching ignores case.
	return nil
}

// SubscribeHSM keeps hmnfd subscribed to HSM's SCN callbacks (the mode used
// without Kafka): it POSTs {hsmURL}/hsm/v2/Subscriptions/SCN with every state,
// Enabled and the roles, subroles and software statuses subscribers use,
// retrying with backoff until HSM accepts, and PATCHes the subscription when
// those change. SCNs then arrive on callbackURL (POST /hmi/v1/scn).
func (s *Service) SubscribeHSM(ctx context.Context, hc *http.Client, hsmURL, callbackURL, subscriber string) error {
	api := client.New(hsmURL, hc, "hmnfd")
	var id int64 // 0: not subscribed yet
	var known *hsm.Values
	for attempt := 0; ; attempt++ {
		var err error
		if known == nil {
			known, err = fetchHSMValues(ctx, api)
		}
		if err == nil {
			err = s.hsmSubscribeOnce(ctx, api, &id, restrict(known, s.hsmBody(subscriber, callbackURL)))
		}
		if err == nil {
			attempt = -1
			// Every minute hmnfd finds its subscription again in HSM's
			// list (by Subscriber and Url: after HSM restarted on an empty
			// database its old ID may be another daemon's, review-6) and
			// PATCHes it, or subscribes anew when HSM dropped it
			// (-scn-dead-after) or an operator deleted it.
			t := time.NewTimer(client.DefaultHoldCheck)
			select {
			case <-s.filterCh:
				t.Stop()
				continue
			case <-t.C:
				s.hsmFind(ctx, api, &id, s.hsmBody(subscriber, callbackURL))
				continue
			case <-ctx.Done():
				t.Stop()
				return nil
			}
		}
		s.hsmStatus.Store("not subscribed: " + err.Error())
		s.log.Warn("hsm_subscribe_failed", "url", redact.URL(api.URL()+"/Subscriptions/SCN"), "attempt", attempt, "err", err)
		d := min(time.Second<<min(attempt, 5), 30*time.Second)
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil
		}
	}
}

// hsmSubscribeOnce creates the HSM subscription, or replaces its filters when
// *id is already known.
func (s *Service) hsmSubscribeOnce(ctx context.Context, api *client.Client, id *int64, body hsm.Subscription) error {
	had := *id
	err := hsmCall(ctx, api, id, body)
	switch {
	case err != nil && *id != 0 && errors.Is(err, problem.ErrNotFound):
		// Deleted on HSM's side (or HSM's database was replaced): subscribe anew.
		*id = 0
		return s.hsmSubscribeOnce(ctx, api, id, body)
	case err != nil && *id == 0 && errors.Is(err, problem.ErrConflict):
		// hmnfd restarted: its subscription, and HSM's cursor of what it
		// delivered, are still there. Adopt it and bring its filters up to date.
		if *id, err = findHSMSubscription(ctx, api, body); err != nil {
			return err
		}
		return s.hsmSubscribeOnce(ctx, api, id, body)
	case err != nil:
		return err
	}
	s.hsmStatus.Store(fmt.Sprintf("subscribed, ID %d", *id))
	s.hsmSubscribedOnce.Do(func() { close(s.hsmSubscribed) })
	if had == *id {
		return nil // the periodic check: still held, nothing to say
	}
	s.log.Info("hsm_subscribed", "url", redact.URL(fmt.Sprintf("%s/Subscriptions/SCN/%d", api.URL(), *id)), "id", *id)
	return nil
}

func (s *Service) hsmBody(subscriber, callbackURL string) hsm.Subscription {
	s.mu.RLock()
	roles, subRoles, sw := s.ix.hsmFilter()
	s.mu.RUnlock()
	t := true
	return hsm.Subscription{Subscriber: subscriber, Enabled: &t, Roles: roles, SubRoles: subRoles,
		SoftwareStatus: sw, States: append([]string(nil), hmsStates...), Url: callbackURL}
}

// hsmCall creates the subscription (*id 0; *id is then the ID HSM
// assigned) or replaces the filters of subscription *id (every list is sent,
// so replace replaces them all).
func hsmCall(ctx context.Context, api *client.Client, id *int64, body hsm.Subscription) error {
	ctx, cancel := context.WithTimeout(ctx, hsmTimeout)
	defer cancel()
	if *id != 0 {
		list := func(l []string) *[]string {
			if l == nil {
				l = []string{}
			}
			return &l
		}
		return api.PatchSubscription(ctx, *id, hsm.SubscriptionPatch{Op: "replace", Enabled: body.Enabled,
			Roles: list(body.Roles), SubRoles: list(body.SubRoles), SoftwareStatus: list(body.SoftwareStatus), States: list(body.States)})
	}
	got, err := api.Subscribe(ctx, body)
	if err == nil {
		*id = got.ID
	}
	return err
}

// hsmFind sets *id to want's subscription in HSM's list (0: none, subscribe
// anew) and deletes the ones it supersedes (hmnfd@hostname of an older
// build to the same Url, which would double every SCN). When HSM cannot be
// listed *id is kept: the PATCH that follows tells.
func (s *Service) hsmFind(ctx context.Context, api *client.Client, id *int64, want hsm.Subscription) {
	ctx, cancel := context.WithTimeout(ctx, hsmTimeout)
	defer cancel()
	list, err := api.Subscriptions(ctx)
	if err != nil {
		return
	}
	*id = 0
	if own, ok := client.Own(list, want); ok {
		*id = own.ID
	}
	for _, old := range client.Superseded(list, want) {
		if err := api.Unsubscribe(ctx, old.ID); err != nil && !errors.Is(err, problem.ErrNotFound) {
			s.log.Warn("hsm_unsubscribe_failed", "id", old.ID, "subscriber", old.Subscriber, "err", err)
			continue
		}
		s.log.Info("hsm_subscription_superseded", "id", old.ID, "subscriber", old.Subscriber,
			"url", redact.URL(old.Url), "by", want.Subscriber)
	}
}

// findHSMSubscription returns the ID of HSM's subscription of want's
// Subscriber to its Url (client.Own: case ignored, as CSM's HSM lower-cases
// both).
func findHSMSubscription(ctx context.Context, api *client.Client, want hsm.Subscription) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, hsmTimeout)
	defer cancel()
	subs, err := api.Subscriptions(ctx)
	if err != nil {
		return 0, err
	}
	if own, ok := client.Own(subs, want); ok {
		return own.ID, nil
	}
	return 0, fmt.Errorf("HSM reports a subscription of %s to %s, but does not list it", want.Subscriber, redact.URL(want.Url))
}

// hsmTimeout bounds one request to HSM.
const hsmTimeout = 10 * time.Second

// fetchHSMValues reads the enum values HSM accepts in a subscription, from
// its /service/values: HSM refuses a subscription naming anything else
// (retired states such as Active, or site subroles it was not configured with).
func fetchHSMValues(ctx context.Context, api *client.Client) (*hsm.Values, error) {
	ctx, cancel := context.WithTimeout(ctx, hsmTimeout)
	defer cancel()
	v, err := api.Values(ctx)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// restrict keeps the states, roles and subroles of body that HSM knows, in
// HSM's spelling.
func restrict(v *hsm.Values, body hsm.Subscription) hsm.Subscription {
	body.States = keepKnown(body.States, v.State)
	body.Roles = keepKnown(body.Roles, v.Role)
	body.SubRoles = keepKnown(body.SubRoles, v.SubRole)
	return body
}

func keepKnown(vals, known []string) []string {
	out := []string{}
	for _, v := range vals {
		for _, k := range known {
			if strings.EqualFold(k, v) {
				out = append(out, k)
				break
			}
		}
	}
	return out
}
