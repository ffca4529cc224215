package sqldb

import "strings"

// Chunks calls fn on consecutive parts [lo, hi) of n items for multi-row
// statements: parts of most items, then halving for the rest, so that few
// distinct statement texts (most, most/2, ..., 1 rows) are ever prepared and
// Stmt's cache keeps them all.
func Chunks(n, most int, fn func(lo, hi int) error) error {
	for lo := 0; lo < n; {
		size := most
		for size > n-lo {
			size /= 2
		}
		if err := fn(lo, lo+size); err != nil {
			return err
		}
		lo += size
	}
	return nil
}

// Placeholders is the VALUES list of a multi-row statement: rows groups of
// cols "?" each, "(?, ?), (?, ?)".
func Placeholders(rows, cols int) string {
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(one+", ", rows), ", ")
}
