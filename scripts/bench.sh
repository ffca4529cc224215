#!/usr/bin/env bash
# `make bench`: the Go benchmarks, then the load-tool benchmarks (each script
# under scripts/bench.d, in name order), then a table of every ratio to a
# same-run ceiling they reported (issue 20: a ratio carries from one machine
# to the next, an absolute rate does not), with the CPU model and load
# average. Results and targets: docs/benchmarks.md.
# Knobs: BENCH_GO=0 skips the Go benchmarks; BENCH_SCRIPTS (a glob, default
# scripts/bench.d/*.sh) picks the load-tool scripts; GO (go);
# HMS_BOS_BENCH_NODES (1000) sizes bos's reboot session against the real
# daemons (BenchmarkRebootSessionReal, about 10 s at 1,000; 10000 is issue
# 16's size, about a minute with its setup).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
machine() {
  echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
}
machine | tee "$out/start"
if [ "${BENCH_GO:-1}" != 0 ]; then
  "${GO:-go}" test -run '^$' -bench . -benchmem -timeout 60m ./... | tee "$out/go.txt"
fi
for b in ${BENCH_SCRIPTS:-scripts/bench.d/*.sh}; do
  [ -e "$b" ] || continue
  echo "== $b" >&2
  bash "$b" | tee "$out/$(basename "$b" .sh).txt"
done

echo
echo "== ratios to same-run ceilings (targets: docs/benchmarks.md)"
cat "$out/start"
machine | sed 's/^machine:/at the end:/'
# Go benchmarks report a metric whose unit starts with "ratio" (ratio, ratio-on, ...).
if [ -f "$out/go.txt" ]; then
  awk '/^pkg:/ { pkg = $2 } /^Benchmark/ { for (i = 3; i < NF; i++) if ($(i + 1) ~ /^ratio/) printf "%-60s %s %s\n", pkg "." $1, $(i + 1), $i }' "$out/go.txt"
fi
# Load-tool scripts print "ratio <what>: <value> (...)".
cat "$out"/*.txt 2>/dev/null | grep '^ratio ' || true
