package ctl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hmsuite/hms/nodes/wire"
)

// ANSI colours of the plan, used only on a terminal.
const (
	green  = "\033[32m"
	red    = "\033[31m"
	yellow = "\033[33m"
	cyan   = "\033[36m"
	faint  = "\033[2m"
	bold   = "\033[1m"
	reset  = "\033[0m"
)

// planWriter renders a plan: per resource its action, each service write
// it needs and a unified diff of the resource before and after, as YAML;
// then the summary line.
type planWriter struct {
	w      io.Writer
	colour bool
	wide   bool // also unchanged resources and services, and each service's diff
	width  [2]int
}

// planText is the table format of apply, diff and delete.
func planText(p wire.Plan, colour bool) func(io.Writer, bool) error {
	return func(w io.Writer, wide bool) error {
		pw := &planWriter{w: w, colour: colour, wide: wide}
		return pw.plan(p)
	}
}

func (pw *planWriter) plan(p wire.Plan) error {
	failed := false
	for _, c := range p.Changes {
		failed = failed || c.Error != ""
		for _, sc := range c.Services {
			if pw.wide || sc.Action != wire.ActionUnchanged {
				pw.width[0] = max(pw.width[0], len(sc.Service))
				pw.width[1] = max(pw.width[1], len(sc.Action))
			}
		}
	}
	for _, c := range p.Changes {
		pw.change(c)
	}
	n := p.Counts()
	_, err := fmt.Fprintf(pw.w, "Plan: %d to create, %d to update, %d to delete.\n",
		n[wire.ActionCreate], n[wire.ActionUpdate], n[wire.ActionDelete])
	if err == nil && p.Applied && !failed {
		_, err = fmt.Fprintln(pw.w, pw.paint(bold, "Applied."))
	}
	return err
}

func (pw *planWriter) paint(colour, s string) string {
	if !pw.colour || s == "" || colour == "" {
		return s
	}
	return colour + s + reset
}

func actionColour(action string) string {
	switch action {
	case wire.ActionCreate:
		return green
	case wire.ActionUpdate:
		return yellow
	case wire.ActionDelete:
		return red
	}
	return faint
}

func (pw *planWriter) change(c wire.Change) {
	if c.Action == wire.ActionUnchanged && c.Error == "" && !pw.wide {
		return
	}
	fmt.Fprintf(pw.w, "%s %s: %s\n", pw.paint(bold, c.Kind), pw.paint(bold, c.Name), pw.paint(actionColour(c.Action), c.Action))
	for _, sc := range c.Services {
		if sc.Action == wire.ActionUnchanged && !pw.wide {
			continue
		}
		fmt.Fprintf(pw.w, "  %-*s  %s  %s\n", pw.width[0], sc.Service,
			pw.paint(actionColour(sc.Action), fmt.Sprintf("%-*s", pw.width[1], sc.Action)), sc.Target)
		if pw.wide {
			pw.diff("      ", sc.Before, sc.After, false)
		}
	}
	pw.diff("  ", c.Before, c.After, true)
	if c.Error != "" {
		fmt.Fprintf(pw.w, "  %s %s\n", pw.paint(red, "error:"), oneLine(c.Error))
	}
	fmt.Fprintln(pw.w)
}

// diff prints the unified diff of before and after rendered as YAML.
func (pw *planWriter) diff(indent string, before, after json.RawMessage, resource bool) {
	for _, l := range unified(asYAML(before, resource), asYAML(after, resource)) {
		colour := ""
		switch l[0] {
		case '+':
			colour = green
		case '-':
			colour = red
		case '@':
			colour = cyan
		}
		fmt.Fprintf(pw.w, "%s%s\n", indent, pw.paint(colour, l))
	}
}

// serverFields are the fields of a resource the daemon sets; they are left
// out of a resource's diff, where they would differ on every update.
var serverFields = map[string]bool{"id": true, "last_updated": true, "observed": true}

// asYAML renders a JSON value as block YAML lines, in the order of its
// keys (yaml.v3 reads JSON, and keeps the order where a map would sort).
func asYAML(raw json.RawMessage, resource bool) []string {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil || len(doc.Content) == 0 {
		return lines(string(raw))
	}
	root := doc.Content[0]
	if resource && root.Kind == yaml.MappingNode {
		var kept []*yaml.Node
		for i := 0; i+1 < len(root.Content); i += 2 {
			if !serverFields[root.Content[i].Value] {
				kept = append(kept, root.Content[i], root.Content[i+1])
			}
		}
		root.Content = kept
	}
	blockStyle(root)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return lines(string(raw))
	}
	_ = enc.Close()
	if strings.TrimSpace(b.String()) == "{}" {
		return nil
	}
	return lines(b.String())
}

// blockStyle drops the flow style and quotes JSON brings, so the YAML is
// block style with quotes only where YAML needs them.
func blockStyle(n *yaml.Node) {
	n.Style = 0
	if n.Kind == yaml.MappingNode && len(n.Content) == 0 {
		n.Style = yaml.FlowStyle
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
