#!/usr/bin/env bash
# HSM load benchmark (docs/benchmarks/hsm.md): 100,000 Node components in a
# fresh database; one POST of all of them; wrk on GET /State/Components (full
# and filtered); BulkStateData of 10,000 and 100,000 IDs timed with curl;
# single-component PATCH StateData with wrk, 32 connections, then the same
# wrk load against the naive durable write (scripts/bench.d/naive-durable: one
# SQLite commit per request, same durability settings) in the same run: the
# ratio hsm/naive carries from one machine to the next (issue 20; target >= 1.5).
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${HSM_BENCH_NODES:-100000}
PORT=${HSM_BENCH_PORT:-27979}
DUR=${HSM_BENCH_DURATION:-10s}
for t in wrk curl awk; do command -v $t >/dev/null || { echo "hsm bench: $t not installed" >&2; exit 1; }; done
work=$(mktemp -d)
go build -o "$work/hsm" ./cmd/hsm
go build -o "$work/naive" ./scripts/bench.d/naive-durable
"$work/hsm" -listen "127.0.0.1:$PORT" -db "$work/hsm.db" -cred-key-file "$work/hsm-cred.key" -log-level error &
pid=$!
naive=
cleanup() {
  for p in $pid $naive; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
base="http://127.0.0.1:$PORT/hsm/v2"
for _ in $(seq 100); do curl -sf "$base/service/ready" >/dev/null && break; sleep 0.1; done

# xname of node i, the same layout as the Go benchmarks.
gen='function x(i) { return sprintf("x%dc%ds%db0n%d", 1000+int(i/512), int(i/64)%8, int(i/8)%8, i%8) }'
awk -v n="$N" "$gen"' BEGIN { printf "{\"Components\":["; for (i = 0; i < n; i++) {
  printf "%s{\"ID\":\"%s\",\"State\":\"%s\",\"NID\":%d,\"Role\":\"Compute\",\"Arch\":\"X86\",\"Class\":\"Mountain\"}",
    (i ? "," : ""), x(i), (i % 2 ? "Off" : "Ready"), i + 1 } print "]}" }' >"$work/post.json"
ids() { awk -v n="$1" -v st="$2" "$gen"' BEGIN { printf "{\"ComponentIDs\":["; for (i = 0; i < n; i++) printf "%s\"%s\"", (i ? "," : ""), x(i); printf "],\"State\":\"%s\"}\n", st }'; }
for st in Off Ready; do ids 10000 $st >"$work/bulk10k-$st.json"; ids "$N" $st >"$work/bulk100k-$st.json"; done

timed() { curl -sS -o /dev/null -w "%{http_code} %{time_total}s\n" "$@"; }
echo "POST $N components: $(timed -X POST -H 'Content-Type: application/json' --data-binary @"$work/post.json" "$base/State/Components")"

echo "== GET /State/Components (full list, $N)"
wrk -t2 -c2 -d"$DUR" --latency "$base/State/Components" | sed -n '/Latency Distribution/,/Requests\/sec/p'
echo "== GET ?type=Node&state=Ready&stateonly=true"
wrk -t2 -c2 -d"$DUR" --latency "$base/State/Components?type=Node&state=Ready&stateonly=true" | sed -n '/Latency Distribution/,/Requests\/sec/p'

for size in 10k 100k; do
  for round in 1 2 3; do
    for st in Off Ready; do
      echo "PATCH BulkStateData $size -> $st: $(timed -X PATCH --data-binary @"$work/bulk$size-$st.json" "$base/State/Components/BulkStateData")"
    done
  done
done

cat >"$work/patch.lua" <<LUA
local n, i = $N, 0
local function x(k) return string.format("x%dc%ds%db0n%d", 1000 + math.floor(k / 512), math.floor(k / 64) % 8, math.floor(k / 8) % 8, k % 8) end
wrk.method = "PATCH"
request = function()
  i = i + 1
  local k = (i * 7919) % n
  local st = (math.floor(i / n) % 2 == 0) and "Off" or "Ready"
  return wrk.format(nil, "/hsm/v2/State/Components/" .. x(k) .. "/StateData", nil, '{"State":"' .. st .. '"}')
end
LUA
echo "== PATCH /State/Components/{xname}/StateData, 32 connections"
wrk -t2 -c32 -d"$DUR" --latency -s "$work/patch.lua" "http://127.0.0.1:$PORT" | tee "$work/hsm.wrk" | sed -n '/Latency Distribution/,/Requests\/sec/p'

"$work/naive" -listen "127.0.0.1:$((PORT + 1))" -db "$work/naive.db" &
naive=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$((PORT + 1))/" && break; sleep 0.1; done
echo "== the same PATCH load on the naive durable write (the ceiling), 32 connections"
wrk -t2 -c32 -d"$DUR" --latency -s "$work/patch.lua" "http://127.0.0.1:$((PORT + 1))" | tee "$work/naive.wrk" | sed -n '/Latency Distribution/,/Requests\/sec/p'
rps() { awk '/^Requests\/sec/ {print $2}' "$1"; }
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v s="$(rps "$work/hsm.wrk")" -v n="$(rps "$work/naive.wrk")" \
  'BEGIN { printf "ratio hsm PATCH / naive durable write: %.2f (%s / %s req/s; target >= 1.5)\n", s / n, s, n }'
