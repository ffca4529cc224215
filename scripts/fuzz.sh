#!/bin/sh
# fuzz.sh runs every Go fuzz target of the module (every `func FuzzXxx` in a
# _test.go file) for FUZZTIME each (default 10s), one after the other:
# `make fuzz`, or `FUZZTIME=5m scripts/fuzz.sh` for a longer run. `go test`
# runs the same targets' seeds as ordinary tests. An input that fails is
# written under the package's testdata/fuzz/FuzzXxx/; commit it with the fix,
# so it stays a seed. FUZZ narrows the run to targets matching a regexp.
set -eu
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
FUZZ=${FUZZ:-.}
cd "$(dirname "$0")/.."
failed=""
for dir in $(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do
	for t in $(grep -h '^func Fuzz' "$dir"/*_test.go | sed 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/' | grep -E "$FUZZ"); do
		echo "== $dir $t ($FUZZTIME)"
		if ! $GO test -run '^$' -fuzz "^$t\$" -fuzztime "$FUZZTIME" "$dir"; then
			failed="$failed $dir:$t"
		fi
	done
done
if [ -n "$failed" ]; then
	echo "fuzz: failed:$failed" >&2
	exit 1
fi
