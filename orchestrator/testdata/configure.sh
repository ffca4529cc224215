#!/bin/sh
# configure.sh LOG CONFIG NODES: the configuration command of bos's tests.
# It notes each run in LOG; configuration "bad" fails as a playbook does,
# "hang" never ends, any other succeeds.
log=$1 config=$2 nodes=$3
echo "$config $nodes $BOS_CONFIGURATION $BOS_NODES" >>"$log"
case $config in
bad)
	echo "fatal: [$nodes]: UNREACHABLE!" >&2
	exit 2
	;;
hang) exec sleep 3600 ;;
esac
echo "ok: [$nodes]"
