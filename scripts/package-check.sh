#!/usr/bin/env bash
# Lists a built hms .deb and checks what it holds: every binary, every systemd
# unit, the default environment file and the license; and that the packaged
# hms reports the version the build stamped.
# Usage: scripts/package-check.sh dist/hms_<version>_<arch>.deb <stamped version>
set -euo pipefail
deb=$1 want=$2
dpkg-deb --info "$deb" | sed -n '/Package:/,$p'
echo "--- contents of $deb"
dpkg-deb --contents "$deb" | awk '{print $1, $3, $6}'
list=$(dpkg-deb --contents "$deb" | awk '{print $6}')
missing=0
for f in hms sls hsm hbtd hmnfd bss reds meds hbagent redfishsim slsgen; do
  need+=("./usr/bin/$f")
done
for u in deploy/systemd/*.service; do need+=("./usr/lib/systemd/system/$(basename "$u")"); done
need+=(./etc/default/hms ./usr/share/doc/hms/copyright ./usr/share/doc/hms/README.md ./usr/share/doc/hms/compatibility.md)
for f in "${need[@]}"; do
  if ! grep -qxF "$f" <<<"$list"; then echo "package-check: $deb lacks $f" >&2; missing=1; fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb --extract "$deb" "$tmp"
got=$("$tmp/usr/bin/hms" version)
if [ "$got" != "hms $want" ]; then echo "package-check: packaged hms version says \"$got\", want \"hms $want\"" >&2; missing=1; fi
[ $missing -eq 0 ] && echo "package-check: $deb ok ($got)"
exit $missing
