#!/usr/bin/env bash
# Load-tool benchmarks (wrk against running daemons). Each benchmark script under
# scripts/bench.d is run in name order; see docs/benchmarks.md for results.
set -euo pipefail
cd "$(dirname "$0")/.."
for b in scripts/bench.d/*.sh; do
  [ -e "$b" ] || continue
  echo "== $b" >&2
  bash "$b"
done
