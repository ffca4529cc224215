#!/bin/sh
# configure.sh LOG CONFIG NODES: the configuration command of bos's tests.
# It notes each run in LOG; configuration "bad" fails as a playbook does,
# "hang" never ends, "recap" ends as ansible-playbook does when its first
# host went through and the second was unreachable; "slow", while the FIFO
# LOG.fifo exists, says so on it and never ends; any other succeeds.
log=$1 config=$2 nodes=$3
echo "$config $nodes $BOS_CONFIGURATION $BOS_NODES" >>"$log"
case $config in
bad)
	echo "fatal: [$nodes]: UNREACHABLE!" >&2
	exit 2
	;;
hang) exec sleep 3600 ;;
slow)
	if [ -p "$log.fifo" ]; then
		echo started >"$log.fifo"
		exec sleep 3600
	fi
	;;
recap)
	echo "PLAY RECAP *********************************************************"
	printf '%-26s : ok=3    changed=1    unreachable=0    failed=0    skipped=0\n' "${nodes%%,*}"
	printf '%-26s : ok=0    changed=0    unreachable=1    failed=0    skipped=0\n' "${nodes#*,}"
	exit 4
	;;
esac
echo "ok: [$nodes]"
