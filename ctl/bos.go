package ctl

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/hmsuite/hms/orchestrator"
)

// bosCommands are `hms bos sessiontemplates|sessions|components ...`: BOS
// v2's records, through bos's API (-bos-url, HMS_BOS_URL, the config files).
func bosCommands() []command {
	cmds := []command{
		{name: "bos sessiontemplates list", summary: "list bos's session templates: boot sets, images and how many nodes they name",
			output: true, define: defineTemplatesList},
		{name: "bos sessiontemplates describe", args: "NAME", summary: "one session template, whole",
			minArgs: 1, maxArgs: 1, output: true, define: defineTemplateDescribe},
		{name: "bos sessiontemplates create", args: "[NAME]", summary: "create or replace a session template from a JSON or YAML file (-f)",
			maxArgs: 1, define: defineTemplateCreate},
		{name: "bos sessiontemplates delete", args: "NAME...", summary: "delete session templates",
			minArgs: 1, maxArgs: -1, define: bosDelete("sessiontemplate", (*orchestrator.Client).DeleteTemplate)},
		{name: "bos sessions list", summary: "list bos's sessions: operation, template, status and times",
			output: true, define: defineSessionsList},
		{name: "bos sessions describe", args: "NAME", summary: "one session, whole",
			minArgs: 1, maxArgs: 1, output: true, define: defineSessionDescribe},
		{name: "bos sessions create", summary: "start a boot, reboot or shutdown session of a template (-template, -operation, -limit)",
			output: true, define: defineSessionCreate},
		{name: "bos sessions status", args: "NAME", summary: "where a session stands: nodes per phase and status, failed nodes with their errors",
			minArgs: 1, maxArgs: 1, output: true, define: defineSessionStatus},
		{name: "bos sessions delete", args: "NAME...", summary: "delete sessions",
			minArgs: 1, maxArgs: -1, define: bosDelete("session", (*orchestrator.Client).DeleteSession)},
		{name: "bos components list", args: "[ID...]", summary: "list bos's components: session, phase, status, error",
			maxArgs: -1, output: true, define: defineComponentsList},
		{name: "bos components describe", args: "ID", summary: "one component: actual, desired and staged state, last action, event counts",
			minArgs: 1, maxArgs: 1, output: true, define: defineComponentDescribe},
	}
	for i := range cmds {
		cmds[i].define = withTenant(cmds[i].define)
	}
	return append(cmds, bosApplyStaged())
}

// withTenant gives a bos command -tenant: its requests act for that tenant
// (BOS's Cray-Tenant-Name header), seeing and changing only its templates,
// sessions and nodes.
func withTenant(define func(*flag.FlagSet) execFunc) func(*flag.FlagSet) execFunc {
	return func(fs *flag.FlagSet) execFunc {
		tn := fs.String("tenant", "", "`TENANT` the requests act for (bos's Cray-Tenant-Name; env HMS_BOS_TENANT)")
		run := define(fs)
		return func(ctx context.Context, s *session, args []string) error {
			s.bosTenant = *tn
			if s.bosTenant == "" && s.Getenv != nil {
				s.bosTenant = s.Getenv("HMS_BOS_TENANT")
			}
			return run(ctx, s, args)
		}
	}
}

func bosDelete(what string, del func(*orchestrator.Client, context.Context, string) error) func(*flag.FlagSet) execFunc {
	return func(*flag.FlagSet) execFunc {
		return func(ctx context.Context, s *session, args []string) error {
			for _, name := range args {
				if err := del(s.bos(), ctx, name); err != nil {
					return err
				}
				fmt.Fprintf(s.Stdout, "%s %s deleted\n", what, name)
			}
			return nil
		}
	}
}

// yamlTable is the table format of the describe commands: the record as
// YAML, in the wire's field names.
func yamlTable(v any) table {
	return table{text: func(w io.Writer, _ bool) error {
		b, err := yaml.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode output: %w", err)
		}
		_, err = w.Write(b)
		return err
	}}
}

func defineTemplatesList(*flag.FlagSet) execFunc {
	return func(ctx context.Context, s *session, _ []string) error {
		list, err := s.bos().Templates(ctx)
		if err != nil {
			return err
		}
		t := table{cols: []column{{name: "NAME"}, {name: "BOOT-SETS"}, {name: "NODES"}, {name: "GROUPS/ROLES"},
			{name: "CONFIGURATION"}, {name: "DESCRIPTION"}, {name: "IMAGES", wide: true}},
			none: "no session templates"}
		for _, tp := range list {
			var sets, images, groups []string
			nodes := 0
			for name, bs := range tp.BootSets {
				sets, images = append(sets, name), append(images, bs.Path)
				nodes += len(bs.NodeList)
				groups = append(append(groups, bs.NodeGroups...), bs.NodeRolesGroups...)
			}
			sort.Strings(sets)
			sort.Strings(images)
			config := ""
			if tp.CFS != nil {
				config = tp.CFS.Configuration
			}
			t.rows = append(t.rows, []string{tp.Name, strings.Join(sets, ","), strconv.Itoa(nodes),
				strings.Join(groups, ","), config, tp.Description, strings.Join(images, ",")})
		}
		return s.emit(list, t)
	}
}

func defineTemplateDescribe(*flag.FlagSet) execFunc {
	return func(ctx context.Context, s *session, args []string) error {
		tp, err := s.bos().Template(ctx, args[0])
		if err != nil {
			return err
		}
		return s.emit(tp, yamlTable(tp))
	}
}

func defineTemplateCreate(fs *flag.FlagSet) execFunc {
	file := fs.String("f", "", "`FILE` holding the template, JSON or YAML (- for stdin); its name unless NAME is given")
	return func(ctx context.Context, s *session, args []string) error {
		if *file == "" {
			return usagef("bos sessiontemplates create: -f FILE is required")
		}
		raw, err := readInput(*file)
		if err != nil {
			return failf("bos sessiontemplates create: %v", err)
		}
		var tp orchestrator.Template
		if err := yaml.UnmarshalStrict(raw, &tp); err != nil {
			return usagef("bos sessiontemplates create: %s: %v", *file, err)
		}
		if len(args) > 0 {
			tp.Name = args[0]
		}
		if tp.Name == "" {
			return usagef("bos sessiontemplates create: name the template (NAME, or name in %s)", *file)
		}
		if _, err := s.bos().PutTemplate(ctx, tp); err != nil {
			return err
		}
		fmt.Fprintf(s.Stdout, "sessiontemplate %s created\n", tp.Name)
		return nil
	}
}

func sessionTable(list []orchestrator.Session) table {
	t := table{cols: []column{{name: "NAME"}, {name: "OPERATION"}, {name: "TEMPLATE"}, {name: "STATUS"},
		{name: "STARTED"}, {name: "ENDED"}, {name: "LIMIT", wide: true}, {name: "STAGE", wide: true},
		{name: "COMPONENTS", wide: true}, {name: "ERROR", wide: true}}, none: "no sessions"}
	for _, ss := range list {
		end, errText, comps := "", "", 0
		if ss.Status.EndTime != nil {
			end = *ss.Status.EndTime
		}
		if ss.Status.Error != nil {
			errText = *ss.Status.Error
		}
		if ss.Components != "" {
			comps = strings.Count(ss.Components, ",") + 1
		}
		t.rows = append(t.rows, []string{ss.Name, ss.Operation, ss.TemplateName, ss.Status.Status, ss.Status.StartTime,
			end, ss.Limit, strconv.FormatBool(ss.Stage), strconv.Itoa(comps), errText})
	}
	return t
}

func defineSessionsList(fs *flag.FlagSet) execFunc {
	status := fs.String("status", "", "only sessions in `STATUS` (pending, running, complete)")
	return func(ctx context.Context, s *session, _ []string) error {
		list, err := s.bos().Sessions(ctx, *status)
		if err != nil {
			return err
		}
		return s.emit(list, sessionTable(list))
	}
}

func defineSessionDescribe(*flag.FlagSet) execFunc {
	return func(ctx context.Context, s *session, args []string) error {
		ss, err := s.bos().Session(ctx, args[0])
		if err != nil {
			return err
		}
		return s.emit(ss, yamlTable(ss))
	}
}

func defineSessionCreate(fs *flag.FlagSet) execFunc {
	tmpl := fs.String("template", "", "session template `NAME` (required)")
	op := fs.String("operation", "", "`OPERATION`: boot, reboot or shutdown (required)")
	limit := fs.String("limit", "", "only these `NODES`: xnames, groups or roles, comma-separated; & AND, ! NOT")
	name := fs.String("name", "", "session `NAME` (default: bos picks a UUID)")
	stage := fs.Bool("stage", false, "only stage the change; applystaged (a node's reboot) carries it out")
	disabled := fs.Bool("include-disabled", false, "act on nodes HSM has disabled too")
	return func(ctx context.Context, s *session, _ []string) error {
		if *tmpl == "" || *op == "" {
			return usagef("bos sessions create: -template and -operation are required")
		}
		req := orchestrator.SessionCreate{Name: *name, Operation: *op, TemplateName: *tmpl, Stage: *stage,
			IncludeDisabled: *disabled}
		if *limit != "" {
			req.Limit = limit
		}
		ss, err := s.bos().CreateSession(ctx, req)
		if err != nil {
			return err
		}
		return s.emit(ss, sessionTable([]orchestrator.Session{ss}))
	}
}

// sessionReport is `hms bos sessions status`: bos's extended status, and
// the session's nodes counted per phase and status, failed ones named.
type sessionReport struct {
	orchestrator.ExtendedStatus
	Counts map[string]int    `json:"counts"`
	Failed map[string]string `json:"failed_nodes"` // node -> error
}

func defineSessionStatus(*flag.FlagSet) execFunc {
	return func(ctx context.Context, s *session, args []string) error {
		c := s.bos()
		st, err := c.SessionStatus(ctx, args[0])
		if err != nil {
			return err
		}
		comps, err := c.Components(ctx, url.Values{"session": {args[0]}})
		if err != nil {
			return err
		}
		r := sessionReport{ExtendedStatus: st, Counts: map[string]int{}, Failed: map[string]string{}}
		for _, comp := range comps {
			phase := comp.Status.Phase
			if phase == "" {
				phase = "-"
			}
			r.Counts[phase+"/"+comp.Status.Status]++
			if comp.Status.Status == orchestrator.StatusFailed {
				r.Failed[comp.ID] = comp.Error
			}
		}
		return s.emit(r, table{text: func(w io.Writer, _ bool) error { return writeSessionReport(w, args[0], r) }})
	}
}

func writeSessionReport(w io.Writer, name string, r sessionReport) error {
	p := r.Phases
	fmt.Fprintf(w, "Session %s: %s, %d nodes, %s elapsed\n", name, r.Status, r.ManagedComponentsCount, r.Timing.Duration)
	fmt.Fprintf(w, "  successful %.0f%%  failed %.0f%%  staged %.0f%%  powering on %.0f%%  powering off %.0f%%  configuring %.0f%%\n",
		r.PercentSuccessful, r.PercentFailed, r.PercentStaged, p.PercentPoweringOn, p.PercentPoweringOff, p.PercentConfiguring)
	keys := make([]string, 0, len(r.Counts))
	for k := range r.Counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintln(w, "Nodes by phase/status:")
	for _, k := range keys {
		fmt.Fprintf(w, "  %-40s %d\n", k, r.Counts[k])
	}
	if len(r.Failed) > 0 {
		ids := make([]string, 0, len(r.Failed))
		for id := range r.Failed {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		fmt.Fprintln(w, "Failed nodes:")
		for _, id := range ids {
			fmt.Fprintf(w, "  %s  %s\n", id, r.Failed[id])
		}
	}
	return nil
}

func defineComponentsList(fs *flag.FlagSet) execFunc {
	filters := map[string]*string{
		"session": fs.String("session", "", "only components of session `NAME`"),
		"enabled": fs.String("enabled", "", "`BOOL`: only components bos is (true) or is not (false) moving"),
		"phase":   fs.String("phase", "", "only components in `PHASE` (powering_on, powering_off, configuring)"),
		"status":  fs.String("status", "", "only components in `STATUS` (power_on_called, stable, failed, ...)"),
	}
	return func(ctx context.Context, s *session, args []string) error {
		q := url.Values{}
		for k, v := range filters {
			if *v != "" {
				q.Set(k, *v)
			}
		}
		if len(args) > 0 {
			q.Set("ids", strings.Join(args, ","))
		}
		list, err := s.bos().Components(ctx, q)
		if err != nil {
			return err
		}
		t := table{cols: []column{{name: "ID"}, {name: "ENABLED"}, {name: "SESSION"}, {name: "PHASE"}, {name: "STATUS"},
			{name: "ERROR"}, {name: "LAST-ACTION", wide: true}, {name: "UPDATED", wide: true}, {name: "KERNEL", wide: true},
			{name: "BOOTED", wide: true}}, none: "no components match"}
		for _, c := range list {
			booted := "no"
			if c.ActualState.BSSToken != "" && c.ActualState.BSSToken == c.DesiredState.BSSToken {
				booted = "yes"
			}
			t.rows = append(t.rows, []string{c.ID, strconv.FormatBool(c.Enabled), c.Session, c.Status.Phase, c.Status.Status,
				c.Error, c.LastAction.Action, c.LastAction.LastUpdated, c.DesiredState.BootArtifacts.Kernel, booted})
		}
		return s.emit(list, t)
	}
}

func defineComponentDescribe(*flag.FlagSet) execFunc {
	return func(ctx context.Context, s *session, args []string) error {
		c, err := s.bos().Component(ctx, args[0])
		if err != nil {
			return err
		}
		return s.emit(c, yamlTable(c))
	}
}
