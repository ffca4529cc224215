#!/usr/bin/env bash
# bss bootscript benchmark (issue 12, docs/benchmarks/bss.md), all in one run
# so the numbers compare:
#   1. a null Go net/http handler (scripts/bench.d/hbtd-null; the ceiling)
#   2. bss GET /boot/v1/bootscript?mac=..., 10,000 known nodes cycled, each
#      booting the Compute tag's kernel, initrd and parameters
#   3. the null handler again (drift check)
# A real hsm holds the 10,000 nodes and their MACs; bss reads them into its
# cache at start. wrk co-located: 2 threads, 64 keep-alive connections.
# DURATION overrides the 15 s per run.
set -euo pipefail
cd "$(dirname "$0")/../.."
for t in wrk curl awk; do command -v $t >/dev/null || { echo "bss.sh: $t missing (apt-get install $t)" >&2; exit 1; }; done
N=10000
dur=${DURATION:-15s}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

go build -o "$work/hsm" ./cmd/hsm
go build -o "$work/bss" ./cmd/bss
go build -o "$work/null" ./scripts/bench.d/hbtd-null

hsm=http://127.0.0.1:28697 bss=http://127.0.0.1:28698 null=http://127.0.0.1:28699
"$work/hsm" -listen 127.0.0.1:28697 -db "$work/hsm.db" -cred-key-file "$work/hsm.key" -log-level error & pids+=($!)
"$work/null" -listen 127.0.0.1:28699 & pids+=($!)
for _ in $(seq 100); do curl -sf -o /dev/null "$hsm/hsm/v2/service/ready" && break; sleep 0.1; done

# Node i: xname as in the other benchmarks, MAC 02:00:00:00:hi:lo, IP 10.100.hi.lo.
gen='function x(i) { return sprintf("x%dc%ds%db0n%d", 1000+int(i/512), int(i/64)%8, int(i/8)%8, i%8) }
     function mac(i) { return sprintf("02:00:00:00:%02x:%02x", int(i/256), i%256) }'
awk -v n=$N "$gen"' BEGIN { printf "{\"Components\":["; for (i = 0; i < n; i++)
  printf "%s{\"ID\":\"%s\",\"Type\":\"Node\",\"State\":\"Ready\",\"NID\":%d,\"Role\":\"Compute\"}", (i ? "," : ""), x(i), i + 1; print "]}" }' >"$work/comps.json"
curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' --data-binary @"$work/comps.json" "$hsm/hsm/v2/State/Components"
# One curl, 16 requests at a time, for the 10,000 EthernetInterfaces.
awk -v n=$N -v u="$hsm/hsm/v2/Inventory/EthernetInterfaces" "$gen"' BEGIN { for (i = 0; i < n; i++) {
  printf "url = \"%s\"\nheader = \"Content-Type: application/json\"\noutput = \"/dev/null\"\n", u
  printf "data = \"{\\\"MACAddress\\\":\\\"%s\\\",\\\"ComponentID\\\":\\\"%s\\\",\\\"IPAddresses\\\":[{\\\"IPAddress\\\":\\\"10.100.%d.%d\\\"}]}\"\n", mac(i), x(i), int(i/256), i%256
  if (i < n - 1) print "next" } }' >"$work/eths.curl"
curl -sf -Z --no-progress-meter --parallel-max 16 -K "$work/eths.curl"

"$work/bss" -listen 127.0.0.1:28698 -db "$work/bss.db" -hsm-url "$hsm" -advertise-url http://10.92.100.81:27778 \
  -log-level error & pids+=($!)
metric() { curl -s "$bss/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
for _ in $(seq 300); do [ "$(metric bss_hsm_cache_nodes 2>/dev/null)" = "$N" ] && break; sleep 0.1; done
curl -sf -o /dev/null -X PUT "$bss/boot/v1/bootparameters" -d '{"hosts":["Compute"],"kernel":"http://10.92.100.81/boot/vmlinuz","initrd":"http://10.92.100.81/boot/initrd","params":"console=ttyS0,115200 root=live:http://10.92.100.81/rootfs rd.live.overlay quiet"}'
echo "cached: $(metric bss_hsm_cache_nodes) nodes; sample script:"
curl -s "$bss/boot/v1/bootscript?mac=02:00:00:00:00:01" | sed 's/^/  /'

cat >"$work/script.lua" <<LUA
local reqs = {}
for i = 0, $N - 1 do
  reqs[i + 1] = wrk.format("GET", string.format("/boot/v1/bootscript?mac=02:00:00:00:%02x:%02x", math.floor(i / 256), i % 256), {["Host"] = "127.0.0.1"})
end
local n = 0
request = function()
  n = n + 1
  return reqs[n % $N + 1]
end
LUA

run() { # label url
  echo "== $1"
  wrk -t2 -c64 -d"$dur" --latency -s "$work/script.lua" "$2" | grep -E 'Requests/sec|Latency|50%|99%|requests in|Non-2xx'
}
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
run "null handler (200, empty body)" "$null"
run "bss GET /boot/v1/bootscript?mac= (10,000 known nodes)" "$bss"
run "null handler again (drift check)" "$null"
curl -s "$bss/metrics" | grep -E '^bss_bootscripts_total|^process_resident_memory_bytes'
