#!/usr/bin/env bash
# TFTP benchmark (issue 12, docs/benchmarks/dhcp.md): CLIENTS (default 200)
# concurrent clients each fetch ipxe.efi (about 1 MB, Debian's ipxe
# package; copied with cp -L into a root of its own, as the docs advise)
# from bss's TFTP server, then from Debian's tftpd-hpa, in one run, over
# loopback; every copy is compared with the original byte for byte. The
# clients are tftp-hpa, then atftp, both with 512-byte blocks, one per ACK,
# then atftp asking for windowsize WINDOW (default 16, RFC 7440; bss grants
# it, tftpd-hpa does not know it and atftp falls back to one block per ACK).
# All clients share one
# address, so bss runs with -tftp-per-client CLIENTS (in a boot storm each
# node has its own address).
# Prints the wall time of each round and the failures. Skips a server whose
# package is missing (tftpd-hpa provides in.tftpd), and the atftp rounds
# without atftp.
set -uo pipefail
cd "$(dirname "$0")/../.."
CLIENTS=${CLIENTS:-200}
WINDOW=${WINDOW:-16}
src=/usr/lib/ipxe/ipxe.efi
for t in tftp cmp curl; do command -v $t >/dev/null || { echo "tftp.sh: $t missing" >&2; exit 0; }; done
[ -e "$src" ] || { echo "tftp.sh: $src missing (apt-get install ipxe)" >&2; exit 0; }
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$work/root"
cp -L "$src" "$work/root/ipxe.efi"
chmod -R a+rX "$work"
go build -o "$work/bss" ./cmd/bss

fetch() { # client port out
  case $1 in
  tftp-hpa) tftp 127.0.0.1 "$2" -m binary -c get ipxe.efi "$3" ;;
  atftp) atftp -g -r ipxe.efi -l "$3" 127.0.0.1 "$2" ;;
  atftp-window) atftp --option "windowsize $WINDOW" -g -r ipxe.efi -l "$3" 127.0.0.1 "$2" ;;
  esac >/dev/null 2>&1
}

round() { # label port client
  local client=${3%-*} # tftp-hpa: tftp, atftp-window: atftp
  command -v "$client" >/dev/null || { echo "== $1, $3: $client missing, skipped"; return; }
  local out="$work/out-$2"
  mkdir -p "$out"
  local t0 t1 pids=() bad=0
  t0=$(date +%s.%N)
  for i in $(seq "$CLIENTS"); do
    fetch "$3" "$2" "$out/$i" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  t1=$(date +%s.%N)
  for i in $(seq "$CLIENTS"); do cmp -s "$work/root/ipxe.efi" "$out/$i" || bad=$((bad + 1)); done
  [ "$3" = atftp-window ] && set -- "$1" "$2" "atftp windowsize $WINDOW"
  printf '== %s, %s: %d clients x %d bytes in %.2f s, %d not byte-exact\n' "$1" "$3" "$CLIENTS" \
    "$(stat -c %s "$work/root/ipxe.efi")" "$(echo "$t1 - $t0" | bc -l)" "$bad"
  rm -rf "$out"
}
wait_udp() { for _ in $(seq 100); do ss -Hlnu "sport = :$1" | grep -q . && return; sleep 0.1; done; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
"$work/bss" -listen 127.0.0.1:28691 -db "$work/bss.db" -tftp-listen 127.0.0.1:28069 -tftp-root "$work/root" \
  -tftp-per-client "$CLIENTS" -log-level error & pid=$!
wait_udp 28069
round "bss TFTP" 28069 tftp-hpa
round "bss TFTP" 28069 atftp
round "bss TFTP" 28069 atftp-window
curl -s 127.0.0.1:28691/metrics | grep -E '^tftp_'
kill "$pid"; wait "$pid" 2>/dev/null; pid=

if command -v in.tftpd >/dev/null; then
  in.tftpd -L -a 127.0.0.1:28070 -s "$work/root" -u root & pid=$!
  wait_udp 28070
  round "tftpd-hpa" 28070 tftp-hpa
  round "tftpd-hpa" 28070 atftp
  round "tftpd-hpa" 28070 atftp-window
  kill "$pid"; wait "$pid" 2>/dev/null; pid=
else
  echo "== tftpd-hpa: in.tftpd missing (apt-get install tftpd-hpa), skipped"
fi
