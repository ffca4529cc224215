#!/bin/sh
# Boot storm: hms up (as make run) and hms sim -nodes N on this host; waits
# until N nodes are Ready in HSM and prints the time from the sim's start
# and each stage's p50/p99 from the sim's per-node stage times.
# and the peak and final resident memory of the suite (hms up) and the sim.
# Usage: scripts/sim-bench.sh [N]  (bin/hms built; ports of make run free;
# TIMEOUT seconds, default 300, bounds the wait; POLL seconds, default 0.5,
# between reads of HSM)
set -eu
N=${1:-1000}
TIMEOUT=${TIMEOUT:-300}
# POLL is the wait between two reads of HSM's Ready nodes (each lists them
# all: at 5,000 nodes a read every 0.1 s cost the suite CPU of its own).
POLL=${POLL:-0.5}
BIN=${BIN:-bin}
DATA=$(mktemp -d)
trap 'kill $SIM $UP 2>/dev/null; wait 2>/dev/null; rm -rf "$DATA"' EXIT
"$BIN/hms" up -data-dir "$DATA" -log-level error -bss-dhcp-listen 127.0.0.1:6767 -bss-dhcp-relay-port 6768 \
	-bss-dhcp-config deploy/sim-dhcp.json -reds-bmc-port 8443 -reds-bmc-insecure -reds-sls-refresh 10s >"$DATA/up.out" 2>&1 &
UP=$!
i=0
until grep -q '^ready$' "$DATA/up.out"; do i=$((i + 1)); [ $i -lt 600 ] || { echo "hms up did not start" >&2; exit 1; }; sleep 0.1; done
start=$(date +%s.%N)
"$BIN/hms" sim -nodes "$N" -log-level error >"$DATA/sim.out" 2>&1 &
SIM=$!
i=0
FAIL=0
while :; do
	ready=$(curl -s 'http://127.0.0.1:27779/hsm/v2/State/Components?type=Node&state=Ready&stateonly=true' | grep -o '"Ready"' | wc -l)
	[ "$ready" -ge "$N" ] && break
	[ "$(awk "BEGIN{print ($(date +%s.%N) - $start < $TIMEOUT)}")" = 1 ] || { echo "only $ready of $N Ready after $TIMEOUT s" >&2; FAIL=1; break; }
	sleep "$POLL"
done
end=$(date +%s.%N)
[ "$FAIL" = 1 ] || echo "nodes $N Ready in HSM $(awk "BEGIN{printf \"%.1f\", $end - $start}") s after hms sim started"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
for p in "up $UP" "sim $SIM"; do
	set -- $p
	echo "$1 memory: $(awk '/^VmHWM|^VmRSS/ {printf "%s %d MiB  ", $1, $2 / 1024}' /proc/$2/status)"
done
# reds' own view: each stage's count and mean, p50/p99 from its histogram
# buckets (upper bounds), and the SNMP walks.
curl -s http://127.0.0.1:8269/metrics | python3 -c '
import re, sys
h, walks = {}, {}
for line in sys.stdin:
    m = re.match(r"reds_stage_seconds_(bucket|sum|count)\{(?:le=\"([^\"]+)\",)?stage=\"(\w+)\"(?:,le=\"([^\"]+)\")?\} (\S+)", line)
    if m:
        kind, le1, stage, le2, v = m.groups()
        d = h.setdefault(stage, {"b": []})
        if kind == "bucket": d["b"].append((float(le1 or le2), float(v)))
        else: d[kind] = float(v)
        continue
    m = re.match(r"reds_snmp_walk(s_total\{result=\"(\w+)\"\}|_seconds_sum|_seconds_count) (\S+)", line)
    if m: walks[m.group(2) or m.group(1)] = float(m.group(3))
def q(b, n, p):
    for le, c in sorted(b):
        if c >= p * n: return le
    return float("inf")
for stage in ["queued", "switch", "sls", "credentials", "hsm"]:
    d = h.get(stage)
    if not d or not d.get("count"): continue
    n, mean = d["count"], d["sum"] / d["count"]
    p50, p99 = q(d["b"], n, .5), q(d["b"], n, .99)
    print(f"reds {stage:12s} n={n:.0f} mean={mean:.2f}s p50<={p50:g}s p99<={p99:g}s")
n = walks.get("_seconds_count", 0)
if n:
    ok, bad, mean = walks.get("ok", 0), walks.get("error", 0), walks["_seconds_sum"] / n
    print(f"reds snmp walks ok={ok:.0f} error={bad:.0f} mean={mean:.3f}s")
' || true
curl -s http://127.0.0.1:27790/sim/v1/devices | START=$start python3 -c '
import json, os, sys
from datetime import datetime
def t(s): return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
ds = json.load(sys.stdin)
on = [t(d["power_on"]) for d in ds if d.get("power_on")]
if on: print("first power-on (layout written) %.1fs after hms sim started" % (min(on) - float(os.environ["START"])))
def pct(v, p): v = sorted(v); return v[min(len(v) - 1, int(p * len(v)))]
for name, a, b in [("power-on -> lease", "power_on", "leased"), ("lease -> boot script naming the node", "leased", "booted"),
                   ("boot script -> first heartbeat accepted", "booted", "heartbeat"), ("power-on -> first heartbeat", "power_on", "heartbeat")]:
    v = [t(d[b]) - t(d[a]) for d in ds if d.get(a) and d.get(b)]
    if v: print(f"{name:42s} n={len(v)} p50={pct(v, .5):.2f}s p99={pct(v, .99):.2f}s")
'
# Nodes not Ready: the sim's view of each (phase, addresses).
[ "$FAIL" = 0 ] || curl -s http://127.0.0.1:27790/sim/v1/devices | python3 -c '
import json, sys
for d in json.load(sys.stdin):
    if d["phase"] != "heartbeat": print("not beating:", d["node"], d["phase"], d.get("bmc_addr", ""), d.get("node_addr", ""))
'
exit "$FAIL"
