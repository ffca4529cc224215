package ctl

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	redswire "github.com/hmsuite/hms/discovery/wire"
	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/ipxe/bss"
	"github.com/hmsuite/hms/statemgr/hsm"
)

func getCommands() []command {
	get := func(what, summary string, define func(*flag.FlagSet) execFunc) command {
		return command{name: "get " + what, summary: summary, maxArgs: 0, output: true, define: define}
	}
	return []command{
		get("nodes", "list the nodes HSM knows, with state, role and NID", defineGetNodes),
		get("components", "list HSM components of any type", defineGetComponents),
		get("endpoints", "list HSM's Redfish endpoints (BMCs) and how their discovery went", defineGetEndpoints),
		get("subscriptions", "list hmnfd's state-change subscriptions", defineGetSubscriptions),
		get("groups", "list HSM's groups and their members", defineGetGroups),
		get("leases", "list the leases of bss's DHCP server", defineGetLeases),
		get("unknown", "list the MAC addresses reds has not placed yet, and why (HSM's unowned MACs if reds is down)", defineGetUnknown),
	}
}

// componentFilters are the HSM component filters `get nodes` and `get
// components` pass on: comma-separated values, as many as the API takes.
type componentFilters map[string]*string

func declareComponentFilters(fs *flag.FlagSet, withType bool) componentFilters {
	f := componentFilters{
		"state":     fs.String("state", "", "only these `STATES` (comma-separated: Ready,Standby)"),
		"flag":      fs.String("flag", "", "only these `FLAGS` (OK, Warning, Alert, Locked)"),
		"role":      fs.String("role", "", "only these `ROLES` (Compute, Application, ...)"),
		"subrole":   fs.String("subrole", "", "only these `SUBROLES`"),
		"group":     fs.String("group", "", "only members of these `GROUPS`"),
		"partition": fs.String("partition", "", "only members of these `PARTITIONS`"),
		"arch":      fs.String("arch", "", "only these `ARCHES` (X86, ARM, ...)"),
		"class":     fs.String("class", "", "only these `CLASSES` (River, Mountain, Hill)"),
		"enabled":   fs.String("enabled", "", "`BOOL`: true for enabled components only, false for disabled ones"),
	}
	if withType {
		f["type"] = fs.String("type", "", "only these `TYPES` (Node, NodeBMC, Chassis, ...)")
	}
	return f
}

func (f componentFilters) query() url.Values {
	q := url.Values{}
	for k, v := range f {
		if l := cli.SplitList(*v); len(l) > 0 {
			q[k] = l
		}
	}
	return q
}

func defineGetNodes(fs *flag.FlagSet) execFunc {
	f := declareComponentFilters(fs, false)
	return func(ctx context.Context, s *session, _ []string) error {
		q := f.query()
		q.Set("type", "Node")
		return listComponents(ctx, s, q, "no nodes match")
	}
}

func defineGetComponents(fs *flag.FlagSet) execFunc {
	f := declareComponentFilters(fs, true)
	return func(ctx context.Context, s *session, _ []string) error {
		return listComponents(ctx, s, f.query(), "no components match")
	}
}

func listComponents(ctx context.Context, s *session, q url.Values, none string) error {
	comps, err := s.hsm().Components(ctx, q)
	if err != nil {
		return err
	}
	if comps == nil {
		comps = []hsm.Component{}
	}
	t := table{none: none, cols: []column{{name: "XNAME"}, {name: "TYPE"}, {name: "STATE"}, {name: "FLAG"},
		{name: "ROLE"}, {name: "SUBROLE"}, {name: "NID"}, {name: "ENABLED", wide: true}, {name: "ARCH", wide: true},
		{name: "CLASS", wide: true}, {name: "NETTYPE", wide: true}, {name: "SOFTWARE", wide: true}}}
	for _, c := range comps {
		t.rows = append(t.rows, []string{c.ID, c.Type, c.State, c.Flag, c.Role, c.SubRole, intp(c.NID),
			boolp(c.Enabled), c.Arch, c.Class, c.NetType, c.SoftwareStatus})
	}
	return s.emit(comps, t)
}

func defineGetEndpoints(fs *flag.FlagSet) execFunc {
	typ := fs.String("type", "", "only this `TYPE` (NodeBMC, ChassisBMC, RouterBMC, ...)")
	status := fs.String("status", "", "only endpoints whose last discovery ended with `STATUS` (DiscoverOK, HTTPsGetFailed, ...)")
	return func(ctx context.Context, s *session, _ []string) error {
		q := url.Values{}
		if *typ != "" {
			q.Set("type", *typ)
		}
		if *status != "" {
			q.Set("laststatus", *status)
		}
		eps, err := s.hsm().RedfishEndpoints(ctx, q)
		if err != nil {
			return err
		}
		if eps == nil {
			eps = []hsm.RedfishEndpoint{}
		}
		t := table{none: "no endpoints match", cols: []column{{name: "XNAME"}, {name: "TYPE"}, {name: "FQDN"},
			{name: "ENABLED"}, {name: "DISCOVERY"}, {name: "LAST ATTEMPT"}, {name: "MAC", wide: true},
			{name: "IP", wide: true}, {name: "USER", wide: true}, {name: "REDFISH", wide: true}}}
		for _, e := range eps {
			t.rows = append(t.rows, []string{e.ID, e.Type, e.FQDN, boolp(e.Enabled), e.DiscoveryInfo.LastDiscoveryStatus,
				timep(e.DiscoveryInfo.LastDiscoveryAttempt), e.MACAddr, e.IPAddress, e.User, e.DiscoveryInfo.RedfishVersion})
		}
		return s.emit(eps, t)
	}
}

func defineGetSubscriptions(fs *flag.FlagSet) execFunc {
	comp := fs.String("component", "", "only the subscriptions of subscriber `XNAME`")
	return func(ctx context.Context, s *session, _ []string) error {
		subs, err := s.hmnfd().List(ctx, *comp)
		if err != nil {
			return err
		}
		t := table{none: "no subscriptions", cols: []column{{name: "SUBSCRIBER"}, {name: "URL"}, {name: "STATES"},
			{name: "COMPONENTS"}, {name: "ROLES", wide: true}, {name: "SUBROLES", wide: true},
			{name: "SOFTWARE", wide: true}, {name: "ENABLED", wide: true}}}
		for _, sub := range subs {
			t.rows = append(t.rows, []string{sub.Subscriber, sub.Url, strings.Join(sub.States, ","),
				count(sub.Components), strings.Join(sub.Roles, ","), strings.Join(sub.SubRoles, ","),
				strings.Join(sub.SoftwareStatus, ","), boolp(sub.Enabled)})
		}
		if subs == nil {
			return s.emit([]any{}, t)
		}
		return s.emit(subs, t)
	}
}

func defineGetGroups(fs *flag.FlagSet) execFunc {
	label := fs.String("group", "", "only these `LABELS` (comma-separated)")
	tag := fs.String("tag", "", "only groups with these `TAGS`")
	return func(ctx context.Context, s *session, _ []string) error {
		q := url.Values{}
		if l := cli.SplitList(*label); len(l) > 0 {
			q["group"] = l
		}
		if l := cli.SplitList(*tag); len(l) > 0 {
			q["tag"] = l
		}
		groups, err := s.hsm().Groups(ctx, q)
		if err != nil {
			return err
		}
		if groups == nil {
			groups = []hsm.Group{}
		}
		t := table{none: "no groups match", cols: []column{{name: "LABEL"}, {name: "MEMBERS"}, {name: "EXCLUSIVE"},
			{name: "TAGS"}, {name: "DESCRIPTION", wide: true}, {name: "MEMBER IDS", wide: true}}}
		for _, g := range groups {
			t.rows = append(t.rows, []string{g.Label, strconv.Itoa(len(g.Members.IDs)), g.ExclusiveGroup,
				strings.Join(g.Tags, ","), g.Description, strings.Join(g.Members.IDs, ",")})
		}
		return s.emit(groups, t)
	}
}

func defineGetLeases(fs *flag.FlagSet) execFunc {
	mac := fs.String("mac", "", "only these `MACS` (comma-separated, any spelling)")
	ip := fs.String("ip", "", "only these `ADDRESSES`")
	name := fs.String("name", "", "only leases of these node `XNAMES` (the HSM node owning the MAC)")
	state := fs.String("state", "", "only leases in these `STATES` (offered, bound, declined, expired)")
	return func(ctx context.Context, s *session, _ []string) error {
		leases, err := s.bss().Leases(ctx, bss.LeaseQuery{MACs: cli.SplitList(*mac), IPs: cli.SplitList(*ip),
			Names: cli.SplitList(*name), States: cli.SplitList(*state)})
		if errors.Is(err, problem.ErrNotFound) {
			return fmt.Errorf("bss runs no DHCP server (bss -dhcp-interface or -dhcp-listen): %w", err)
		}
		if err != nil {
			return err
		}
		if leases == nil {
			leases = []bss.DHCPLease{}
		}
		t := table{none: "no leases match", cols: []column{{name: "IP"}, {name: "MAC"}, {name: "STATE"},
			{name: "EXPIRES"}, {name: "NODE"}, {name: "KNOWN", wide: true}, {name: "HOSTNAME", wide: true}, {name: "SUBNET", wide: true},
			{name: "LAST EXCHANGE", wide: true}, {name: "RELAY", wide: true}}}
		for _, l := range leases {
			t.rows = append(t.rows, []string{l.IPAddress, l.MACAddress, l.State, timev(l.Expires), l.ComponentID,
				strconv.FormatBool(l.Known), l.Hostname, l.Subnet, timev(l.LastExchange), or(l.Relay, "direct")})
		}
		return s.emit(leases, t)
	}
}

func defineGetUnknown(fs *flag.FlagSet) execFunc {
	deferred := fs.Bool("deferred", false, "also list the MACs on no switch still in their grace (reds -unplaced-grace)")
	return func(ctx context.Context, s *session, _ []string) error {
		unknown, err := s.reds().Unknown(ctx, *deferred)
		if errors.As(err, new(*unreachableError)) {
			fmt.Fprintf(s.Stderr, "note: %v; listing HSM's Ethernet interfaces with no component instead\n", explain(err))
			return getUnknownHSM(ctx, s)
		}
		if err != nil {
			return err
		}
		if unknown == nil {
			unknown = []redswire.Unknown{}
		}
		return s.emit(unknown, unknownTable(unknown))
	}
}

// unknownTable shows unknown MACs, from reds or from HSM.
func unknownTable(unknown []redswire.Unknown) table {
	t := table{none: "no unknown MAC addresses", cols: []column{{name: "MAC"}, {name: "IP"}, {name: "REASON"},
		{name: "SWITCH"}, {name: "PORT"}, {name: "ATTEMPTS"}, {name: "LAST SEEN"}, {name: "NEXT ATTEMPT", wide: true},
		{name: "XNAME", wide: true}, {name: "DEFERRED", wide: true}, {name: "DETAIL", wide: true}}}
	for _, u := range unknown {
		t.rows = append(t.rows, []string{u.MACAddress, u.IPAddress, u.Reason, u.Switch, u.Port,
			strconv.Itoa(u.Attempts), timev(u.LastAttempt), timev(u.NextAttempt), u.Xname,
			strconv.FormatBool(u.Deferred), u.Detail})
	}
	return t
}

// getUnknownHSM lists HSM's view when reds is not reachable: the Ethernet
// interfaces that belong to no component, in reds' shape (so -o json reads
// the same either way), without reds' reasons: Reason says where they came
// from, Detail is the interface's description, the last seen time its
// LastUpdate.
func getUnknownHSM(ctx context.Context, s *session) error {
	eis, err := unknownMACs(ctx, s)
	if err != nil {
		return err
	}
	unknown := make([]redswire.Unknown, 0, len(eis))
	for _, e := range eis {
		u := redswire.Unknown{MACAddress: e.MACAddress, Reason: redswire.ReasonInHSMOnly, Detail: e.Description,
			LastAttempt: e.LastUpdate}
		if hw, err := net.ParseMAC(e.MACAddress); err == nil {
			u.MACAddress = hw.String()
		}
		if len(e.IPAddresses) > 0 {
			u.IPAddress = e.IPAddresses[0].IPAddress
		}
		unknown = append(unknown, u)
	}
	return s.emit(unknown, unknownTable(unknown))
}

// unknownMACs are HSM's Ethernet interfaces that belong to no component:
// what DHCP has seen and discovery has not placed yet.
func unknownMACs(ctx context.Context, s *session) ([]hsm.EthernetInterface, error) {
	all, err := s.hsm().EthernetInterfaces(ctx, nil)
	if err != nil {
		return nil, err
	}
	out := []hsm.EthernetInterface{}
	for _, e := range all {
		if e.ComponentID == "" {
			out = append(out, e)
		}
	}
	return out, nil
}

func intp(p *int) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(*p)
}

func boolp(p *bool) string {
	if p == nil {
		return ""
	}
	return strconv.FormatBool(*p)
}

func timep(t *time.Time) string {
	if t == nil {
		return ""
	}
	return timev(*t)
}

func timev(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// count is the length of a list as a cell ("" for none: all components).
func count(l []string) string {
	switch len(l) {
	case 0:
		return ""
	case 1:
		return l[0]
	}
	return strconv.Itoa(len(l))
}
