#!/usr/bin/env bash
# SLS load benchmark: loads the synthetic 100,000-node system (slsgen) into a
# fresh sls over HTTP, then measures GET /v1/hardware/{xname} with wrk and 16
# concurrent connections, then the same wrk load against a null Go handler
# (scripts/bench.d/hbtd-null) in the same run: the ratio sls/null is what
# carries from one machine to the next (issue 20; target >= 0.7; the absolute
# target was >= 20,000 req/s). Results: docs/benchmarks/sls.md.
# Knobs: SLS_BENCH_NODES (100000), SLS_BENCH_SECONDS (15), SLS_BENCH_PORT
# (18376; the null handler listens on the next port).
set -euo pipefail
cd "$(dirname "$0")/../.."
nodes=${SLS_BENCH_NODES:-100000}
secs=${SLS_BENCH_SECONDS:-15}
port=${SLS_BENCH_PORT:-18376}
command -v wrk >/dev/null || { echo "sls bench: wrk not installed (apt-get install wrk)" >&2; exit 1; }

work=$(mktemp -d)
pid=
null=
cleanup() {
  for p in $pid $null; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/" ./cmd/sls ./cmd/slsgen
go build -o "$work/null" ./scripts/bench.d/hbtd-null
"$work/slsgen" -nodes "$nodes" -out "$work/dump.json"
"$work/sls" -listen "127.0.0.1:$port" -db "$work/sls.db" -log-level warn &
pid=$!
base="http://127.0.0.1:$port/v1"
for _ in $(seq 100); do curl -sf "$base/readiness" >/dev/null && break; sleep 0.1; done

echo "== sls loadstate: $nodes nodes, $(du -h "$work/dump.json" | cut -f1) dump"
curl -sf -o /dev/null -w 'loadstate: HTTP %{http_code} in %{time_total} s\n' -F "sls_dump=@$work/dump.json" "$base/loadstate"

# A node in the middle of the system.
x=$(curl -sf "$base/search/hardware?type=comptype_node&extra_properties.NID=$((nodes / 2))" | grep -o '"Xname":"[^"]*"' | cut -d'"' -f4)
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== wrk GET /v1/hardware/$x, 16 connections, ${secs}s"
wrk -t2 -c16 -d"${secs}s" --latency "$base/hardware/$x" | tee "$work/sls.wrk"

"$work/null" -listen "127.0.0.1:$((port + 1))" &
null=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$((port + 1))/" && break; sleep 0.1; done
echo "== wrk GET on the null handler (the ceiling), 16 connections, ${secs}s"
wrk -t2 -c16 -d"${secs}s" --latency "http://127.0.0.1:$((port + 1))/v1/hardware/$x" | tee "$work/null.wrk"
rps() { awk '/^Requests\/sec/ {print $2}' "$1"; }
awk -v s="$(rps "$work/sls.wrk")" -v n="$(rps "$work/null.wrk")" \
  'BEGIN { printf "ratio sls GET / null handler: %.2f (%s / %s req/s; target >= 0.7)\n", s / n, s, n }'

for q in "type=comptype_node" "extra_properties.VendorName=ethernet1/1/30" \
         "type=comptype_mgmt_switch_connector&class=River&extra_properties.VendorName=ethernet1/1/30&parent=x1500c2w1"; do
  curl -sf -o /dev/null -w "search $q: %{size_download} bytes in %{time_total} s\n" "$base/search/hardware?$q"
done
