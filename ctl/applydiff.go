package ctl

import (
	"fmt"
	"strings"
)

// unified returns the hunks of a unified diff (3 lines of context) turning
// lines a into lines b, without the ---/+++ header: "@@ -1,3 +1,4 @@" and
// lines starting with ' ', '-' or '+'.
func unified(a, b []string) []string {
	ops := diffLines(a, b)
	const context = 3
	var out []string
	for i := 0; i < len(ops); {
		if ops[i].op == ' ' {
			i++
			continue
		}
		// A hunk: from context lines before the change to context lines
		// after the last change closer than 2*context to the next.
		start := max(i-context, 0)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].op != ' ' {
				end = j
			} else if j-end > 2*context {
				break
			}
		}
		end = min(end+context+1, len(ops))
		out = append(out, hunk(ops[start:end]))
		for _, o := range ops[start:end] {
			out = append(out, string(o.op)+o.line)
		}
		i = end
	}
	return out
}

// edit is one line of a diff: kept (' '), removed ('-') or added ('+'),
// with its line numbers (1-based) in a and b.
type edit struct {
	op     byte
	line   string
	ai, bi int
}

func hunk(ops []edit) string {
	var an, bn int
	as, bs := -1, -1
	for _, o := range ops {
		if o.op != '+' {
			an++
			if as < 0 {
				as = o.ai
			}
		}
		if o.op != '-' {
			bn++
			if bs < 0 {
				bs = o.bi
			}
		}
	}
	return fmt.Sprintf("@@ -%s +%s @@", hunkRange(as, an, ops[0].ai), hunkRange(bs, bn, ops[0].bi))
}

// hunkRange is "start,count"; an empty range names the line before it, as
// diff -u does ("-0,0" for a file that did not exist).
func hunkRange(start, n, near int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", max(near-1, 0))
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// maxDiffCells bounds the longest-common-subsequence table; larger inputs
// are shown as all of a removed and all of b added.
const maxDiffCells = 4 << 20

// diffLines is a line diff by longest common subsequence.
func diffLines(a, b []string) []edit {
	// Common prefix and suffix first: most diffs are a few changed lines.
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	q := 0
	for q < len(a)-p && q < len(b)-p && a[len(a)-1-q] == b[len(b)-1-q] {
		q++
	}
	var out []edit
	for i := range p {
		out = append(out, edit{op: ' ', line: a[i], ai: i + 1, bi: i + 1})
	}
	out = append(out, middle(a[p:len(a)-q], b[p:len(b)-q], p)...)
	for i := range q {
		ai, bi := len(a)-q+i, len(b)-q+i
		out = append(out, edit{op: ' ', line: a[ai], ai: ai + 1, bi: bi + 1})
	}
	return out
}

// middle diffs a and b, which start after off common lines.
func middle(a, b []string, off int) []edit {
	var out []edit
	n, m := len(a), len(b)
	if n*m > maxDiffCells {
		for i, l := range a {
			out = append(out, edit{op: '-', line: l, ai: off + i + 1, bi: off + 1})
		}
		for j, l := range b {
			out = append(out, edit{op: '+', line: l, ai: off + n + 1, bi: off + j + 1})
		}
		return out
	}
	// lcs[i][j] is the length of the LCS of a[i:] and b[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out = append(out, edit{op: ' ', line: a[i], ai: off + i + 1, bi: off + j + 1})
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, edit{op: '-', line: a[i], ai: off + i + 1, bi: off + j + 1})
			i++
		default:
			out = append(out, edit{op: '+', line: b[j], ai: off + i + 1, bi: off + j + 1})
			j++
		}
	}
	return out
}

// lines splits text into lines without their newlines.
func lines(text string) []string {
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}
