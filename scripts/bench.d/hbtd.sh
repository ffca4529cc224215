#!/usr/bin/env bash
# hbtd load benchmark (issue 5), all in one run so the numbers compare:
#   1. a null Go net/http handler that only reads the body (the ceiling)
#   2. hbtd POST /hmi/v1/heartbeat, 10,000 distinct xnames, 100,000 nodes tracked
#   3. hbtd POST /hmi/v1/heartbeats, batches of 1,000
# wrk co-located: 2 threads, 64 connections. Results go to stdout; copy them
# into docs/benchmarks/hbtd.md. DURATION overrides the 15 s per run.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v wrk >/dev/null || { echo "hbtd.sh: wrk missing (apt-get install wrk)" >&2; exit 1; }
dur=${DURATION:-15s}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

go build -o "$work/hbtd" ./cmd/hbtd
go build -o "$work/null" ./scripts/bench.d/hbtd-null

# Lua: single heartbeats cycling through 10,000 xnames (the first 10,000 of the
# 100,000 preloaded), and batches of 1,000 cycling through all 100,000.
# Requests are formatted once, at load, so wrk spends its CPU sending them.
cat >"$work/single.lua" <<'LUA'
local reqs = {}
for i = 0, 9999 do
  local x = string.format("x%dc%ds%db0n%d", 1000 + math.floor(i / 2048), math.floor(i / 256) % 8, math.floor(i / 4) % 64, i % 4)
  reqs[i + 1] = wrk.format("POST", "/hmi/v1/heartbeat", {["Host"] = "127.0.0.1", ["Content-Type"] = "application/json"},
    '{"Component":"' .. x .. '","Hostname":"nid' .. i .. '","NID":"' .. i .. '","Status":"OK","TimeStamp":"2026-11-21T12:00:00.123456Z"}')
end
local n = 0
request = function()
  n = n + 1
  return reqs[n % 10000 + 1]
end
LUA
cat >"$work/batch.lua" <<'LUA'
local reqs = {}
for b = 0, 99 do
  local parts = {}
  for k = 0, 999 do
    local i = b * 1000 + k
    parts[#parts + 1] = string.format('{"Component":"x%dc%ds%db0n%d","NID":"%d","Status":"OK","TimeStamp":"2026-11-21T12:00:00.123456Z"}',
      1000 + math.floor(i / 2048), math.floor(i / 256) % 8, math.floor(i / 4) % 64, i % 4, i)
  end
  reqs[b + 1] = wrk.format("POST", "/hmi/v1/heartbeats", {["Host"] = "127.0.0.1", ["Content-Type"] = "application/json"}, "[" .. table.concat(parts, ",") .. "]")
end
local n = 0
request = function()
  n = n + 1
  return reqs[n % 100 + 1]
end
LUA

"$work/null" -listen 127.0.0.1:28599 & pids+=($!)
# Thresholds far above the run length keep the preloaded nodes alive, so the
# run measures ingestion, not a storm of warnings. The null server stands in
# for HSM: it answers 200 to the BulkStateData calls for the preloaded nodes.
"$work/hbtd" -listen 127.0.0.1:28598 -db "$work/hbtd.db" -hsm-url http://127.0.0.1:28599 \
  -warntime 3600 -errtime 7200 -log-level error & pids+=($!)
for _ in $(seq 50); do curl -sf -o /dev/null http://127.0.0.1:28598/hmi/v1/liveness && break; sleep 0.1; done
metric() { curl -s http://127.0.0.1:28598/metrics | awk -v m="$1" '$1 == m {print $2}'; }

# Preload 100,000 nodes with the batch script, then let the "started"
# notifications and their SQLite rows drain before measuring.
for _ in $(seq 30); do
  [ "$(metric 'hbtd_nodes{state="alive"}')" = 100000 ] && break
  wrk -t1 -c1 -d2s -s "$work/batch.lua" http://127.0.0.1:28598 >/dev/null
done
for _ in $(seq 120); do
  [ "$(metric 'hbtd_queue_pending{sink="hsm"}')" = 0 ] && [ "$(metric 'hbtd_queue_pending{sink="store"}')" = 0 ] && break
  sleep 0.5
done
echo "tracked: $(metric 'hbtd_nodes{state="alive"}') alive; pending hsm=$(metric 'hbtd_queue_pending{sink="hsm"}') store=$(metric 'hbtd_queue_pending{sink="store"}')"

run() { # label url script
  echo "== $1"
  wrk -t2 -c64 -d"$dur" --latency -s "$3" "$2" | grep -E 'Requests/sec|Latency|50%|99%|requests in|Non-2xx'
}
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
run "null handler (read body, 200)" http://127.0.0.1:28599 "$work/single.lua"
run "hbtd POST /heartbeat" http://127.0.0.1:28598 "$work/single.lua"
run "null handler again (drift check)" http://127.0.0.1:28599 "$work/single.lua"
run "hbtd POST /heartbeats (1,000 per request)" http://127.0.0.1:28598 "$work/batch.lua"
curl -s http://127.0.0.1:28598/metrics | grep -E '^hbtd_(nodes|heartbeats_total)|^process_resident_memory_bytes'
