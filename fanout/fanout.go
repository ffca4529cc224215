// Package fanout is hmnfd, the notification fanout daemon: nodes and services
// subscribe to state changes of other components, and every state-change
// notification (SCN) that HSM publishes is delivered to each matching subscriber
// by HTTP POST.
//
// Unlike the HMS daemon it replaces, delivery is durable: subscriptions and every
// undelivered SCN live in SQLite, each subscriber URL has its own ordered queue
// and sender with exponential backoff, a subscriber that is down keeps its
// subscription and backlog until a retention limit (age or count) is exceeded,
// and nothing is pruned because of one refused connection or because the
// subscriber's node turned Off. SCNs arrive from the bus (a consumer group that
// commits only after the SCN is durably queued) or over HTTP (/hmi/v1/scn) when
// hmnfd subscribes to HSM callbacks instead.
package fanout

import (
	"net/url"
	"slices"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
)

// Component wildcards a subscription may list in Components.
const (
	WildcardAll      = "all"
	WildcardAllNodes = "allnodes"
)

// Subscription is what a subscriber agent asks to be told about, in the JSON
// shape of both API versions (SubscribePost). A subscription is identified by
// its subscriber component and agent; v1 spells both as Subscriber
// "[agent@]xname", v2 puts them in the path and reports them as
// SubscriberComponent and SubscriberAgent.
//
// An SCN matches when it carries a State in States, a Role in Roles, a SubRole
// in SubRoles, a SoftwareStatus in SoftwareStatus, or an Enabled change while
// Enabled is true (comparisons ignore case), and at least one of its
// components is watched: listed in Components, covered by "all" or (for nodes)
// "allnodes", or Components is empty, which watches every component.
type Subscription struct {
	Components          []string `json:"Components,omitempty"`
	Subscriber          string   `json:"Subscriber,omitempty"`
	SubscriberComponent string   `json:"SubscriberComponent,omitempty"`
	SubscriberAgent     string   `json:"SubscriberAgent,omitempty"`
	Enabled             *bool    `json:"Enabled,omitempty"`
	Roles               []string `json:"Roles,omitempty"`
	SubRoles            []string `json:"SubRoles,omitempty"`
	SoftwareStatus      []string `json:"SoftwareStatus,omitempty"`
	States              []string `json:"States,omitempty"`
	Url                 string   `json:"Url,omitempty"` //nolint:revive // HMS field name
}

// SubscriptionList is the body of GET /subscriptions.
type SubscriptionList struct {
	SubscriptionList []Subscription `json:"SubscriptionList"`
}

// Key identifies a subscription: the subscriber's component xname and agent name.
type Key struct {
	Component string
	Agent     string
}

// String is the v1 spelling, "agent@xname" or "xname".
func (k Key) String() string {
	if k.Agent == "" {
		return k.Component
	}
	return k.Agent + "@" + k.Component
}

// ParseSubscriber splits and validates a v1 Subscriber, "[agent@]xname".
func ParseSubscriber(s string) (Key, error) {
	agent, comp, ok := strings.Cut(s, "@")
	if !ok {
		agent, comp = "", s
	}
	return newKey(comp, agent, ok, "Subscriber")
}

// NewKey validates a v2 subscriber component and agent from a request path.
func NewKey(component, agent string) (Key, error) {
	return newKey(component, agent, true, "agent")
}

func newKey(comp, agent string, agentGiven bool, field string) (Key, error) {
	x, err := xname.Parse(comp)
	if err != nil {
		return Key{}, problem.Invalidf("%s: %q is not a valid subscriber xname: %v", field, comp, err)
	}
	if agentGiven && !validAgent(agent) {
		return Key{}, problem.Invalidf("%s: agent name %q must be 1-64 letters, digits, '-', '_' or '.'", field, agent)
	}
	return Key{Component: x.String(), Agent: agent}, nil
}

func validAgent(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			return false
		}
	}
	return true
}

// States are the HMS component states a subscription may name, in HMS spelling.
var hmsStates = []string{"Unknown", "Empty", "Populated", "Off", "On", "Active", "Standby", "Halt", "Ready", "Paused"}

// HSM roles and subroles, used when hmnfd subscribes to HSM callbacks so that
// role changes reach it even before a subscriber asks for a particular role.
var (
	hsmRoles    = []string{"Compute", "Service", "System", "Application", "Storage", "Management"}
	hsmSubRoles = []string{"Master", "Worker", "Storage", "UAN", "Gateway", "LNETRouter", "Visualization", "UserDefined"}
)

// canonicalState returns the HMS spelling of state, ignoring case.
func canonicalState(s string) (string, bool) {
	for _, st := range hmsStates {
		if strings.EqualFold(st, s) {
			return st, true
		}
	}
	return "", false
}

// validate checks sub and rewrites it into canonical form: normalised xnames,
// HMS state spellings, sorted de-duplicated lists. Identity fields are not
// touched. Errors name the offending field.
func (sub *Subscription) validate() error {
	comps := make([]string, 0, len(sub.Components))
	for i, c := range sub.Components {
		switch lc := strings.ToLower(strings.TrimSpace(c)); lc {
		case WildcardAll, WildcardAllNodes:
			comps = append(comps, lc)
		default:
			x, err := xname.Parse(c)
			if err != nil {
				return problem.Invalidf("Components[%d]: %q is not a valid xname or wildcard: %v", i, c, err)
			}
			comps = append(comps, x.String())
		}
	}
	sub.Components = sortUniq(comps)
	states := make([]string, 0, len(sub.States))
	for i, s := range sub.States {
		st, ok := canonicalState(s)
		if !ok {
			return problem.Invalidf("States[%d]: unknown state %q (want one of %s)", i, s, strings.Join(hmsStates, ", "))
		}
		states = append(states, st)
	}
	sub.States = sortUniq(states)
	for _, l := range []struct {
		name string
		vals *[]string
	}{{"Roles", &sub.Roles}, {"SubRoles", &sub.SubRoles}, {"SoftwareStatus", &sub.SoftwareStatus}} {
		for i, v := range *l.vals {
			if !validAgent(v) {
				return problem.Invalidf("%s[%d]: %q must be 1-64 letters, digits, '-', '_' or '.'", l.name, i, v)
			}
		}
		*l.vals = sortUniq(*l.vals)
	}
	if err := validURL(sub.Url); err != nil {
		return err
	}
	if len(sub.States)+len(sub.Roles)+len(sub.SubRoles)+len(sub.SoftwareStatus) == 0 && (sub.Enabled == nil || !*sub.Enabled) {
		return problem.Invalidf("States, Roles, SubRoles, SoftwareStatus, Enabled: the subscription watches nothing")
	}
	return nil
}

func validURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return problem.Invalidf("Url: %q is not an http:// or https:// URL with a host", s)
	}
	return nil
}

func sortUniq(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	slices.Sort(s)
	return slices.Compact(s)
}

// withKey returns sub as reported for key: v1 Subscriber plus the v2 fields.
func (sub Subscription) withKey(k Key) Subscription {
	sub.Subscriber = k.String()
	sub.SubscriberComponent = k.Component
	sub.SubscriberAgent = k.Agent
	return sub
}

// merge applies a PATCH: every field present in p replaces the stored one.
func (sub Subscription) merge(p Subscription) Subscription {
	if p.Components != nil {
		sub.Components = p.Components
	}
	if p.Enabled != nil {
		sub.Enabled = p.Enabled
	}
	if p.Roles != nil {
		sub.Roles = p.Roles
	}
	if p.SubRoles != nil {
		sub.SubRoles = p.SubRoles
	}
	if p.SoftwareStatus != nil {
		sub.SoftwareStatus = p.SoftwareStatus
	}
	if p.States != nil {
		sub.States = p.States
	}
	if p.Url != "" {
		sub.Url = p.Url
	}
	return sub
}
