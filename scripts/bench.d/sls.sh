#!/usr/bin/env bash
# SLS load benchmark: loads the synthetic 100,000-node system (slsgen) into a
# fresh sls over HTTP, then measures GET /v1/hardware/{xname} with wrk and 16
# concurrent connections (target >= 20,000 req/s). Results: docs/benchmarks/sls.md.
# Knobs: SLS_BENCH_NODES (100000), SLS_BENCH_SECONDS (15), SLS_BENCH_PORT (18376).
set -euo pipefail
cd "$(dirname "$0")/../.."
nodes=${SLS_BENCH_NODES:-100000}
secs=${SLS_BENCH_SECONDS:-15}
port=${SLS_BENCH_PORT:-18376}
command -v wrk >/dev/null || { echo "sls bench: wrk not installed (apt-get install wrk)" >&2; exit 1; }

work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

go build -o "$work/" ./cmd/sls ./cmd/slsgen
"$work/slsgen" -nodes "$nodes" -out "$work/dump.json"
"$work/sls" -listen "127.0.0.1:$port" -db "$work/sls.db" -log-level warn &
pid=$!
base="http://127.0.0.1:$port/v1"
for _ in $(seq 100); do curl -sf "$base/readiness" >/dev/null && break; sleep 0.1; done

echo "== sls loadstate: $nodes nodes, $(du -h "$work/dump.json" | cut -f1) dump"
curl -sf -o /dev/null -w 'loadstate: HTTP %{http_code} in %{time_total} s\n' -F "sls_dump=@$work/dump.json" "$base/loadstate"

# A node in the middle of the system.
x=$(curl -sf "$base/search/hardware?type=comptype_node&extra_properties.NID=$((nodes / 2))" | grep -o '"Xname":"[^"]*"' | cut -d'"' -f4)
echo "== wrk GET /v1/hardware/$x, 16 connections, ${secs}s"
wrk -t2 -c16 -d"${secs}s" --latency "$base/hardware/$x"

for q in "type=comptype_node" "extra_properties.VendorName=ethernet1/1/30" \
         "type=comptype_mgmt_switch_connector&class=River&extra_properties.VendorName=ethernet1/1/30&parent=x1500c2w1"; do
  curl -sf -o /dev/null -w "search $q: %{size_download} bytes in %{time_total} s\n" "$base/search/hardware?$q"
done
