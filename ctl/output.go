package ctl

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"

	"github.com/hmsuite/hms/internal/cli"
)

// A table is what the table and wide formats print; the json and yaml
// formats print the value the rows were made from instead.
type table struct {
	cols []column
	rows [][]string
	// none is printed on stderr instead of a lone header when there are no
	// rows ("no nodes match").
	none string
	// text, when set, prints the table and wide formats instead of cols and rows.
	text func(w io.Writer, wide bool) error
}

// A column of a table; a wide one is printed only by -o wide.
type column struct {
	name string
	wide bool
}

// emit prints v in the session's format: t for table and wide.
func (s *session) emit(v any, t table) error {
	switch s.format {
	case "json":
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return fmt.Errorf("encode output: %w", err)
		}
		_, err = fmt.Fprintf(s.Stdout, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode output: %w", err)
		}
		_, err = s.Stdout.Write(b)
		return err
	}
	if t.text != nil {
		return t.text(s.Stdout, s.format == "wide")
	}
	if len(t.rows) == 0 && t.none != "" {
		fmt.Fprintln(s.Stderr, t.none)
		return nil
	}
	return t.write(s, s.format == "wide")
}

func (t table) write(s *session, wide bool) error {
	tw := tabwriter.NewWriter(s.Stdout, 0, 0, 2, ' ', 0)
	line := func(cells []string) {
		var out []string
		for i, c := range t.cols {
			if c.wide && !wide {
				continue
			}
			v := ""
			if i < len(cells) {
				v = cells[i]
			}
			if v == "" {
				v = "-"
			}
			out = append(out, v)
		}
		fmt.Fprintln(tw, strings.Join(out, "\t"))
	}
	var head []string
	for _, c := range t.cols {
		head = append(head, c.name)
	}
	line(head)
	for _, r := range t.rows {
		line(r)
	}
	return tw.Flush()
}

func usagef(format string, a ...any) error { return cli.Usagef(format, a...) }

func upper(s string) string { return strings.ToUpper(s) }
