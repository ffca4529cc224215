#!/usr/bin/env bash
# Installs the Debian packages the peer and integration tests talk to, and gcc
# (the race detector of `make test` needs cgo), when they are missing and we
# are root. On a laptop without root the tests that need a missing peer skip
# (and fail under CI=true).
set -euo pipefail
# package:command pairs; the command (or, starting with /, a file) tells
# whether the package is there. Add a peer here when a test starts to need it.
peers=(
  atftp:atftp
  busybox:busybox
  curl:curl
  gcc:gcc
  iproute2:ip
  ipxe:/usr/lib/ipxe/undionly.kpxe
  ipxe-qemu:/usr/lib/ipxe/qemu/efi-e1000.rom
  isc-dhcp-client:dhclient
  kcat:kcat
  kea-admin:perfdhcp
  ovmf:/usr/share/OVMF/OVMF_CODE_4M.fd
  postgresql:/usr/lib/postgresql/15/bin/postgres
  python3:python3
  qemu-system-x86:qemu-system-x86_64
  radvd:radvd
  seabios:/usr/share/seabios/bios-256k.bin
  redfishtool:redfishtool
  snmp:snmpwalk
  snmpd:snmpd
  tftp-hpa:tftp
  udhcpc:udhcpc
  wrk:wrk
)
missing=()
for p in "${peers[@]}"; do
  what="${p#*:}"
  if [ "${what#/}" != "$what" ]; then
    [ -e "$what" ] || missing+=("${p%%:*}")
  else
    command -v "$what" >/dev/null 2>&1 || missing+=("${p%%:*}")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "install-peers: not root; missing test peers: ${missing[*]} (their tests will skip)" >&2
  exit 0
fi
echo "install-peers: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
