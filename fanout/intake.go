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
	"github.com/hmsuite/hms/internal/httpclient"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
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
	scns := make([]SCN, 0, len(msgs))
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
func DecodeSCN(b []byte) (SCN, error) {
	var scn SCN
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&scn); err != nil {
		return SCN{}, problem.Invalidf("SCN: %v", err)
	}
	if dec.More() {
		return SCN{}, problem.Invalidf("SCN: unexpected data after the JSON value")
	}
	return scn, checkSCN(&scn)
}

// checkSCN requires at least one component and normalises every xname.
func checkSCN(scn *SCN) error {
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

// hsmSubscription is HSM's SCN subscription body (Subscriptions/SCN).
type hsmSubscription struct {
	Subscriber     string   `json:"Subscriber,omitempty"`
	Op             string   `json:"Op,omitempty"`
	Enabled        *bool    `json:"Enabled,omitempty"`
	Roles          []string `json:"Roles"`
	SubRoles       []string `json:"SubRoles"`
	SoftwareStatus []string `json:"SoftwareStatus"`
	States         []string `json:"States"`
	Url            string   `json:"Url,omitempty"` //nolint:revive // HSM field name
}

// SubscribeHSM keeps hmnfd subscribed to HSM's SCN callbacks (the mode used
// without Kafka): it POSTs {hsmURL}/hsm/v2/Subscriptions/SCN with every state,
// Enabled and the roles, subroles and software statuses subscribers use,
// retrying with backoff until HSM accepts, and PATCHes the subscription when
// those change. SCNs then arrive on callbackURL (POST /hmi/v1/scn).
func (s *Service) SubscribeHSM(ctx context.Context, client *http.Client, hsmURL, callbackURL, subscriber string) error {
	hsm := httpclient.New("hsm", hsmURL, "/hsm/v2", client)
	const base = "/Subscriptions/SCN"
	id := ""
	var known *hsmValues
	for attempt := 0; ; attempt++ {
		var err error
		if known == nil {
			known, err = fetchHSMValues(ctx, hsm)
		}
		if err == nil {
			err = s.hsmSubscribeOnce(ctx, hsm, base, &id, known.restrict(s.hsmBody(subscriber, callbackURL)))
		}
		if err == nil {
			attempt = -1
			select {
			case <-s.filterCh:
				continue
			case <-ctx.Done():
				return nil
			}
		}
		s.hsmStatus.Store("not subscribed: " + err.Error())
		s.log.Warn("hsm_subscribe_failed", "url", hsm.Base+base, "attempt", attempt, "err", err)
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
func (s *Service) hsmSubscribeOnce(ctx context.Context, hsm *httpclient.Client, base string, id *string, body hsmSubscription) error {
	method, path := http.MethodPost, base
	if *id != "" {
		method, path, body.Op, body.Subscriber, body.Url = http.MethodPatch, base+"/"+*id, "replace", "", ""
	}
	got, err := hsmCall(ctx, hsm, method, path, body)
	switch {
	case err != nil && *id != "" && errors.Is(err, problem.ErrNotFound):
		// Deleted on HSM's side (or HSM's database was replaced): subscribe anew.
		*id = ""
		return s.hsmSubscribeOnce(ctx, hsm, base, id, body)
	case err != nil && *id == "" && errors.Is(err, problem.ErrConflict):
		// hmnfd restarted: its subscription, and HSM's cursor of what it
		// delivered, are still there. Adopt it and bring its filters up to date.
		if *id, err = findHSMSubscription(ctx, hsm, base, body.Subscriber, body.Url); err != nil {
			return err
		}
		return s.hsmSubscribeOnce(ctx, hsm, base, id, body)
	case err != nil:
		return err
	}
	if *id == "" {
		*id = got
	}
	s.hsmStatus.Store("subscribed, ID " + *id)
	s.hsmSubscribedOnce.Do(func() { close(s.hsmSubscribed) })
	s.log.Info("hsm_subscribed", "url", hsm.Base+path, "id", *id)
	return nil
}

func (s *Service) hsmBody(subscriber, callbackURL string) hsmSubscription {
	s.mu.RLock()
	roles, subRoles, sw := s.ix.hsmFilter()
	s.mu.RUnlock()
	t := true
	return hsmSubscription{Subscriber: subscriber, Enabled: &t, Roles: roles, SubRoles: subRoles,
		SoftwareStatus: sw, States: append([]string(nil), hmsStates...), Url: callbackURL}
}

// hsmCall sends one subscription request and returns the subscription ID HSM assigned.
func hsmCall(ctx context.Context, hsm *httpclient.Client, method, path string, body hsmSubscription) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, hsmTimeout)
	defer cancel()
	var out struct {
		ID json.RawMessage `json:"ID"`
	}
	if err := hsm.Do(ctx, method, path, body, &out); err != nil {
		return "", err
	}
	return string(bytes.Trim(out.ID, `"`)), nil
}

// findHSMSubscription returns the ID of HSM's subscription of subscriber to url.
func findHSMSubscription(ctx context.Context, hsm *httpclient.Client, base, subscriber, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, hsmTimeout)
	defer cancel()
	var list struct {
		SubscriptionList []struct {
			ID         json.RawMessage `json:"ID"`
			Subscriber string          `json:"Subscriber"`
			Url        string          `json:"Url"` //nolint:revive // HMS spelling
		} `json:"SubscriptionList"`
	}
	if err := hsm.Do(ctx, http.MethodGet, base, nil, &list); err != nil {
		return "", err
	}
	for _, sub := range list.SubscriptionList {
		if sub.Subscriber == subscriber && sub.Url == url {
			return string(bytes.Trim(sub.ID, `"`)), nil
		}
	}
	return "", fmt.Errorf("HSM reports a subscription of %s to %s, but does not list it", subscriber, url)
}

// hsmTimeout bounds one request to HSM.
const hsmTimeout = 10 * time.Second

// hsmValues are the enum values HSM accepts in a subscription, from its
// /service/values: HSM refuses a subscription naming anything else (retired
// states such as Active, or site subroles it was not configured with).
type hsmValues struct {
	State   []string `json:"State"`
	Role    []string `json:"Role"`
	SubRole []string `json:"SubRole"`
}

func fetchHSMValues(ctx context.Context, hsm *httpclient.Client) (*hsmValues, error) {
	ctx, cancel := context.WithTimeout(ctx, hsmTimeout)
	defer cancel()
	var v hsmValues
	if err := hsm.Do(ctx, http.MethodGet, "/service/values", nil, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// restrict keeps the states, roles and subroles of body that HSM knows, in
// HSM's spelling.
func (v *hsmValues) restrict(body hsmSubscription) hsmSubscription {
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
