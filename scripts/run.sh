#!/usr/bin/env bash
# Runs every built daemon of the suite on its embedded defaults (SQLite files in
# ./hms-data, in-process bus, loopback peers) until Ctrl-C. This is `make run`
# until the all-in-one `hms up` exists.
set -euo pipefail
cd "$(dirname "$0")/.."
data=${HMS_DATA:-./hms-data}
mkdir -p "$data"
pids=()
start() { # name args...
  local name=$1; shift
  [ -x "bin/$name" ] || return 0
  echo "run: starting $name $*" >&2
  "bin/$name" "$@" &
  pids+=($!)
}
trap 'kill -TERM "${pids[@]}" 2>/dev/null; wait' INT TERM EXIT
start sls   -db "$data/sls.db"
start hsm   -db "$data/hsm.db" -cred-key-file "$data/hsm-cred.key" -sls-url http://127.0.0.1:8376
start hbtd  -db "$data/hbtd.db" -hsm-url http://127.0.0.1:27779
start hmnfd -db "$data/hmnfd.db" -hsm-url http://127.0.0.1:27779 -scn-in-url http://127.0.0.1:28600/hmi/v1/scn
[ ${#pids[@]} -gt 0 ] || { echo "run: no daemons built" >&2; exit 1; }
wait -n "${pids[@]}"
