package ctl

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/hmsuite/hms/internal/httpclient"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/power/pcs"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// Status is what `hms status` reports.
type Status struct {
	Daemons []DaemonStatus `json:"Daemons"`
	// Nodes counts HSM's nodes, in all and by State and Role.
	Nodes *NodeCounts `json:"Nodes,omitempty"`
	// BMCs counts HSM's Redfish endpoints by last discovery status.
	BMCs map[string]int `json:"BMCs,omitempty"`
	// UnknownMACs counts the MACs reds has not placed (as `hms get unknown`
	// lists them; HSM's Ethernet interfaces with no component if reds is
	// not reachable).
	UnknownMACs *int `json:"UnknownMACs,omitempty"`
	// StateChanges are HSM's newest component State and Flag changes (at
	// most 10), newest first: the machine's recent transitions.
	StateChanges []hsm.StateChange `json:"StateChanges"`
	// StateChangesNote says why there are no StateChanges when HSM keeps
	// no history (a shipped HSM, which has no History route).
	StateChangesNote string `json:"StateChangesNote,omitempty"`
	// Transitions are PCS's newest power transitions (at most 3), newest first.
	Transitions []pcs.Transition `json:"Transitions"`
	// Errors are the queries that failed.
	Errors []string `json:"Errors,omitempty"`
}

// DaemonStatus is one daemon's readiness and build.
type DaemonStatus struct {
	Name    string `json:"Name"`
	URL     string `json:"URL"`
	Ready   bool   `json:"Ready"`
	Version string `json:"Version,omitempty"`
	Error   string `json:"Error,omitempty"`
}

// How many of HSM's state changes and of PCS's power transitions status shows.
const (
	recentStateChanges = 10
	recentTransitions  = 3
)

// noHistory is what status and describe say when HSM has no history route.
const noHistory = "hsm keeps no state history (a shipped HSM: GET /State/Components/History is 404)"

// NodeCounts are HSM's nodes, counted.
type NodeCounts struct {
	Total   int            `json:"Total"`
	ByState map[string]int `json:"ByState"`
	ByRole  map[string]int `json:"ByRole"`
}

// statusServices are the daemons status probes: those with a readiness path.
func statusServices() []service {
	var out []service
	for _, svc := range services() {
		if svc.path != "" {
			out = append(out, svc)
		}
	}
	return out
}

func defineStatus(*flag.FlagSet) execFunc {
	return func(ctx context.Context, s *session, _ []string) error {
		st := Status{StateChanges: []hsm.StateChange{}, Transitions: []pcs.Transition{}}
		var wg sync.WaitGroup
		probed := statusServices()
		st.Daemons = make([]DaemonStatus, len(probed))
		for i, svc := range probed {
			wg.Go(func() { st.Daemons[i] = s.daemonStatus(ctx, svc) })
		}
		wg.Go(func() { s.machineStatus(ctx, &st) })
		wg.Wait()
		if err := s.emit(st, table{text: func(w io.Writer, _ bool) error { return writeStatus(w, st) }}); err != nil {
			return err
		}
		notReady := 0
		for _, d := range st.Daemons {
			if !d.Ready {
				notReady++
			}
		}
		if notReady > 0 || len(st.Errors) > 0 {
			return failf("status: %d of %d daemons not ready, %d queries failed", notReady, len(st.Daemons), len(st.Errors))
		}
		return nil
	}
}

// daemonStatus probes one daemon's readiness route and reads its build from
// the hms_build_info metric.
func (s *session) daemonStatus(ctx context.Context, svc service) DaemonStatus {
	e := s.urls[svc.name]
	d := DaemonStatus{Name: svc.name, URL: e.URL}
	err := httpclient.New(svc.name, e.URL, "", s.hc[svc.name]).Do(ctx, http.MethodGet, svc.path, nil, nil)
	if err != nil {
		d.Error = explain(err).Error()
		return d
	}
	d.Ready = true
	d.Version = s.buildVersion(ctx, svc.name)
	return d
}

// buildVersion is the version label of the daemon's hms_build_info metric,
// or "" when it has none (a daemon of another suite).
func (s *session) buildVersion(ctx context.Context, name string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(s.urls[name].URL, "/")+"/metrics", nil)
	if err != nil {
		return ""
	}
	resp, err := s.hc[name].Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	defer io.Copy(io.Discard, resp.Body)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "hms_build_info{") {
			continue
		}
		_, v, ok := strings.Cut(line, `version="`)
		if v, _, ok2 := strings.Cut(v, `"`); ok && ok2 {
			return v
		}
	}
	return ""
}

// machineStatus fills in the counts HSM gives.
func (s *session) machineStatus(ctx context.Context, st *Status) {
	fail := func(err error) { st.Errors = append(st.Errors, explain(err).Error()) }
	h := s.hsm()
	if nodes, err := h.Components(ctx, map[string][]string{"type": {"Node"}}); err != nil {
		fail(err)
	} else {
		st.Nodes = countNodes(nodes)
	}
	if eps, err := h.RedfishEndpoints(ctx, nil); err != nil {
		fail(err)
	} else {
		st.BMCs = map[string]int{}
		for _, e := range eps {
			st.BMCs[or(e.DiscoveryInfo.LastDiscoveryStatus, "unknown")]++
		}
	}
	if n, err := s.unknownCount(ctx); err != nil {
		fail(err)
	} else {
		st.UnknownMACs = &n
	}
	hist, err := h.ComponentHistory(ctx, url.Values{"limit": {strconv.Itoa(recentStateChanges)}})
	switch {
	case errors.Is(err, problem.ErrNotFound):
		st.StateChangesNote = noHistory
	case err != nil:
		fail(err)
	default:
		st.StateChanges = hist.Newest(recentStateChanges)
	}
	ts, err := s.pcs().Transitions(ctx)
	if err != nil {
		fail(err)
		return
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Created.After(ts[j].Created) })
	st.Transitions = ts[:min(len(ts), recentTransitions)]
}

func countNodes(nodes []hsm.Component) *NodeCounts {
	c := &NodeCounts{Total: len(nodes), ByState: map[string]int{}, ByRole: map[string]int{}}
	for _, n := range nodes {
		c.ByState[or(n.State, "unknown")]++
		c.ByRole[or(n.Role, "none")]++
	}
	return c
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// writeStatus is the table form of st.
func writeStatus(w io.Writer, st Status) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DAEMON\tURL\tREADY\tVERSION")
	for _, d := range st.Daemons {
		ready := "yes"
		if !d.Ready {
			ready = "NO: " + d.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.Name, d.URL, ready, or(d.Version, "-"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if st.Nodes != nil {
		fmt.Fprintf(tw, "Nodes:\t%d\n", st.Nodes.Total)
		fmt.Fprintf(tw, "  by state:\t%s\n", counts(st.Nodes.ByState))
		fmt.Fprintf(tw, "  by role:\t%s\n", counts(st.Nodes.ByRole))
	}
	if st.BMCs != nil {
		fmt.Fprintf(tw, "BMCs by discovery:\t%s\n", counts(st.BMCs))
	}
	if st.UnknownMACs != nil {
		fmt.Fprintf(tw, "Unknown MACs:\t%d\n", *st.UnknownMACs)
	}
	writeChanges(tw, "Recent transitions:", st.StateChanges, st.StateChangesNote)
	for i, t := range st.Transitions {
		label := ""
		if i == 0 {
			label = "Power transitions (pcs):"
		}
		fmt.Fprintf(tw, "%s\t%s %s %s (%d of %d succeeded, %d failed) %s\n", label, t.Created.UTC().Format(time.RFC3339),
			t.Operation, t.Status, t.Counts.Succeeded, t.Counts.Total, t.Counts.Failed, t.TransitionID)
	}
	for _, e := range st.Errors {
		fmt.Fprintf(tw, "Error:\t%s\n", e)
	}
	return tw.Flush()
}

// writeChanges writes one line per change under label, or "none" (with
// note, if any).
func writeChanges(w io.Writer, label string, cs []hsm.StateChange, note string) {
	if len(cs) == 0 {
		fmt.Fprintf(w, "%s\t%s\n", label, strings.TrimSuffix("none; "+note, "; "))
	}
	for i, c := range cs {
		if i > 0 {
			label = ""
		}
		by := c.Cause
		if c.Agent != "" {
			by = strings.TrimSpace(by + " " + c.Agent)
		}
		fmt.Fprintf(w, "%s\t%s %s %s -> %s", label, c.Timestamp.UTC().Format(time.RFC3339), c.ID,
			stateText(c.OldState, c.OldFlag), stateText(c.State, c.Flag))
		if by != "" {
			fmt.Fprintf(w, " (%s)", by)
		}
		fmt.Fprintln(w)
	}
}

// stateText is "Ready", "Ready/Warning" when the Flag is not OK, "(new)"
// before a component existed.
func stateText(state, flag string) string {
	switch {
	case state == "":
		return "(new)"
	case flag == "" || flag == hsm.FlagOK:
		return state
	}
	return state + "/" + flag
}

// counts is "Ready 60, Standby 3", largest first ("none" when empty).
func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " " + strconv.Itoa(m[k])
	}
	return strings.Join(parts, ", ")
}

// unknownCount counts what `hms get unknown` lists: reds' unknown MACs (not
// the deferred ones), or, if reds is not reachable, HSM's Ethernet
// interfaces with no component.
func (s *session) unknownCount(ctx context.Context) (int, error) {
	u, err := s.reds().Unknown(ctx, false)
	if errors.As(err, new(*unreachableError)) {
		h, err := unknownMACs(ctx, s)
		return len(h), err
	}
	return len(u), err
}
