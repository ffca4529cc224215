#!/usr/bin/env bash
# DHCP benchmark (issue 12, docs/benchmarks/dhcp.md): perfdhcp (Debian
# kea-admin) full DORA exchanges against three servers, one after the other
# in one run so the numbers compare:
#   1. bss's DHCP server (leases in SQLite, synchronous=FULL, lease events
#      through the outbox onto the in-process bus)
#   2. Kea 2.2 kea-dhcp4 with the memfile lease database, persisted
#   3. dnsmasq (--no-ping, lease file)
# Each server runs in its own network namespace, perfdhcp in another, joined
# by a veth pair; perfdhcp runs as a relay (it sets giaddr), as ISC publishes
# Kea's figures. RATE offered exchanges/s (default 12000) for SECS seconds
# (default 10) over 60,000 distinct MACs. perfdhcp runs single-threaded
# (-g single; PERFDHCP_THREADS=multi for its default on more than one CPU):
# its multi-threaded mode receives in a second thread and spends about twice
# the CPU per lease (0.15-0.19 against 0.08 CPU-s per 1,000 leases here),
# CPU taken from the server it measures when both share two cores. Needs root, perfdhcp, kea-dhcp4
# (kea-dhcp4-server) and dnsmasq (dnsmasq-base); a missing one is skipped.
set -uo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "dhcp.sh: needs root (network namespaces)" >&2; exit 0; }
command -v perfdhcp >/dev/null || { echo "dhcp.sh: perfdhcp missing (apt-get install kea-admin)" >&2; exit 0; }
RATE=${RATE:-12000}
THREADS=${PERFDHCP_THREADS:-single}
SECS=${SECS:-10}
S=hmsbench-dhs$$ C=hmsbench-dhc$$
work=$(mktemp -d)
chmod 755 "$work"
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  ip netns del $S 2>/dev/null; ip netns del $C 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add $S && ip netns add $C
ip link add hmsbd$$ netns $S type veth peer name hmsbc$$ netns $C
ip -n $S addr add 10.60.0.1/16 dev hmsbd$$; ip -n $S link set hmsbd$$ up; ip -n $S link set lo up
ip -n $C addr add 10.60.0.2/16 dev hmsbc$$; ip -n $C link set hmsbc$$ up; ip -n $C link set lo up
go build -o "$work/bss" ./cmd/bss

# cpu PID: the process's user+system CPU time in clock ticks.
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# rcvbuf: replies perfdhcp's socket dropped so far in its namespace (its
# receive buffer was full: on a 2-core machine perfdhcp competes with the
# server for CPU).
rcvbuf() { ip netns exec $C awk '/^Udp:/ {n++} n==2 && /^Udp:/ {print $6; exit}' /proc/net/snmp; }
perf() { # label
  echo "== $1 (load average $(cut -d' ' -f1 /proc/loadavg))"
  local c0 r0 c1 out acks hz
  c0=$(cpu "$pid") r0=$(rcvbuf)
  # /usr/bin/time: perfdhcp's own CPU, which bounds what any server can
  # show on a machine it shares (perfdhcp output comes first, time's last).
  local timer=()
  [ -x /usr/bin/time ] && timer=(/usr/bin/time -f "perfdhcp CPU %U %S") # Debian's time package
  out=$(ip netns exec $C "${timer[@]}" perfdhcp -4 -g "$THREADS" -l hmsbc$$ -r "$RATE" -R 60000 -p "$SECS" 10.60.0.1 2>&1)
  c1=$(cpu "$pid") hz=$(getconf CLK_TCK)
  echo "$out" | awk '/^Rate:/ || /^\*\*\*Statistics/ || /^sent packets/ || /^received packets/ || /^drops ratio/ || /^avg delay/'
  echo "perfdhcp's socket: RcvbufErrors $(( $(rcvbuf) - r0 )) in this run"
  # The load-independent figure: the server's CPU per lease perfdhcp
  # completed (perfdhcp shares the cores, so rates move with the load).
  acks=$(echo "$out" | awk '/REQUEST-ACK/ {f = 1} f && /^received packets/ {print $3; exit}')
  awk -v c=$((c1 - c0)) -v hz="$hz" -v a="${acks:-0}" 'BEGIN {
    printf "server CPU: %.2f s, %.3f CPU-s per 1,000 leases\n", c / hz, (a > 0 ? c / hz / a * 1000 : 0) }'
  echo "$out" | awk -v a="${acks:-0}" '/^perfdhcp CPU/ {
    printf "perfdhcp CPU: %.2f s, %.3f CPU-s per 1,000 leases\n", $3 + $4, (a > 0 ? ($3 + $4) / a * 1000 : 0) }'
}
stop() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=; }
# wait_port proto port: until something in $S listens there.
wait_port() { for _ in $(seq 100); do ip netns exec $S ss -Hln"$1" "sport = :$2" | grep -q . && return; sleep 0.1; done; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
echo "perfdhcp -4 -g $THREADS -r $RATE -R 60000 -p $SECS (relayed, full DORA)"

ip netns exec $S "$work/bss" -listen 127.0.0.1:28690 -db "$work/bss.db" -dhcp-interface hmsbd$$ \
  -dhcp-subnet 10.60.0.0/16 -dhcp-range 10.60.1.0-10.60.255.250 -log-level error & pid=$!
wait_port u 67
perf "bss DHCP (SQLite leases, outbox to the bus)"
ip netns exec $S curl -s 127.0.0.1:28690/metrics | grep -E '^dhcp_(replies|dropped|leases|events|store|commits)'
stop

if command -v kea-dhcp4 >/dev/null; then
  mkdir -p /run/kea
  cat >"$work/kea.json" <<J
{"Dhcp4": {"interfaces-config": {"interfaces": ["hmsbd$$"], "dhcp-socket-type": "udp"},
 "lease-database": {"type": "memfile", "persist": true, "name": "$work/kea.leases", "lfc-interval": 0},
 "valid-lifetime": 3600, "authoritative": true,
 "subnet4": [{"id": 1, "subnet": "10.60.0.0/16", "pools": [{"pool": "10.60.1.0 - 10.60.255.250"}]}],
 "loggers": [{"name": "kea-dhcp4", "severity": "ERROR", "output_options": [{"output": "$work/kea.log"}]}]}}
J
  ip netns exec $S kea-dhcp4 -c "$work/kea.json" >"$work/kea.out" 2>&1 & pid=$!
  wait_port u 67
  perf "Kea 2.2 memfile (persisted)"
  stop
else
  echo "== Kea: kea-dhcp4 missing (apt-get install kea-dhcp4-server), skipped"
fi

if command -v dnsmasq >/dev/null; then
  ip netns exec $S dnsmasq -k --port=0 --user=root --interface=hmsbd$$ --bind-interfaces \
    --dhcp-range=10.60.1.0,10.60.255.250,1h --dhcp-leasefile="$work/dm.leases" --dhcp-authoritative --no-ping \
    --log-facility="$work/dm.log" & pid=$!
  wait_port u 67
  perf "dnsmasq"
  stop
else
  echo "== dnsmasq missing (apt-get install dnsmasq-base), skipped"
fi
