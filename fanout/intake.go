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
// retrying with backoff until HSM accepts, and checks the subscription
// again (hsmHold) when those change and every client.DefaultHoldCheck.
// SCNs then arrive on callbackURL (POST /hmi/v1/scn).
func (s *Service) SubscribeHSM(ctx context.Context, hc *http.Client, hsmURL, callbackURL, subscriber string) error {
	api := client.New(hsmURL, hc, "hmnfd")
	var id int64 // the ID of hmnfd's subscription at the last check (0: none)
	for attempt := 0; ; attempt++ {
		err := s.hsmHold(ctx, api, &id, s.hsmBody(subscriber, callbackURL))
		if err == nil {
			attempt = -1
			t := time.NewTimer(client.DefaultHoldCheck)
			select {
			case <-s.filterCh:
				t.Stop()
				continue
			case <-t.C:
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

// hsmHold has HSM hold want, restricted to the values HSM knows now (read
// each time: a site's HSM can be configured with more roles and subroles).
// It finds hmnfd's subscription in HSM's list by Subscriber and Url
// (client.Own), never by the ID it had: after HSM restarted on an empty
// database that ID may be another daemon's (review-6), whose filters a
// PATCH would replace. Held with want's filters, nothing is sent; held
// with others, they are PATCHed; not held (HSM dropped it after
// -scn-dead-after, an operator deleted it, HSM lost its database), it is
// subscribed anew. *id is set to the subscription's ID.
func (s *Service) hsmHold(ctx context.Context, api *client.Client, id *int64, want hsm.Subscription) error {
	prev := *id
	known, err := fetchHSMValues(ctx, api)
	if err != nil {
		return err
	}
	want = restrict(known, want)
	list, err := hsmList(ctx, api)
	if err != nil {
		return err
	}
	cur, held := client.Own(list, want) // case ignored: CSM's HSM lower-cases both
	*id = cur.ID                        // 0 when not held
	if !held || !client.SameFilters(cur, want) {
		if err := hsmPut(ctx, api, id, want); err != nil {
			return err
		}
	}
	s.hsmDropSuperseded(ctx, api, list, want)
	s.hsmStatus.Store(fmt.Sprintf("subscribed, ID %d", *id))
	s.hsmSubscribedOnce.Do(func() { close(s.hsmSubscribed) })
	if prev != *id {
		s.log.Info("hsm_subscribed", "url", redact.URL(fmt.Sprintf("%s/Subscriptions/SCN/%d", api.URL(), *id)), "id", *id)
	}
	return nil
}

// hsmPut PATCHes want's filters onto subscription *id, or subscribes when
// *id is 0 (*id is then the ID HSM assigned). A subscription deleted since
// HSM's list was read (404) is subscribed anew; one HSM holds although its
// list lacked it (409: made meanwhile) is looked up and PATCHed.
func hsmPut(ctx context.Context, api *client.Client, id *int64, want hsm.Subscription) error {
	err := hsmCall(ctx, api, id, want)
	switch {
	case err != nil && *id != 0 && errors.Is(err, problem.ErrNotFound):
		*id = 0
		return hsmCall(ctx, api, id, want)
	case err != nil && *id == 0 && errors.Is(err, problem.ErrConflict):
		list, err := hsmList(ctx, api)
		if err != nil {
			return err
		}
		cur, held := client.Own(list, want)
		if !held {
			return fmt.Errorf("HSM reports a subscription of %s to %s, but does not list it", want.Subscriber, redact.URL(want.Url))
		}
		*id = cur.ID
		return hsmCall(ctx, api, id, want)
	}
	return err
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

// hsmList returns HSM's SCN subscriptions.
func hsmList(ctx context.Context, api *client.Client) ([]hsm.Subscription, error) {
	ctx, cancel := context.WithTimeout(ctx, hsmTimeout)
	defer cancel()
	list, err := api.Subscriptions(ctx)
	if err != nil && !errors.Is(err, problem.ErrNotFound) {
		return nil, err
	}
	return list, nil
}

// hsmDropSuperseded deletes the subscriptions in list that want supersedes
// (hmnfd@hostname of an older build to the same Url, which would double
// every SCN).
func (s *Service) hsmDropSuperseded(ctx context.Context, api *client.Client, list []hsm.Subscription, want hsm.Subscription) {
	ctx, cancel := context.WithTimeout(ctx, hsmTimeout)
	defer cancel()
	for _, old := range client.Superseded(list, want) {
		if err := api.Unsubscribe(ctx, old.ID); err != nil && !errors.Is(err, problem.ErrNotFound) {
			s.log.Warn("hsm_unsubscribe_failed", "id", old.ID, "subscriber", old.Subscriber, "err", err)
			continue
		}
		s.log.Info("hsm_subscription_superseded", "id", old.ID, "subscriber", old.Subscriber,
			"url", redact.URL(old.Url), "by", want.Subscriber)
	}
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
