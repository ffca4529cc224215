#!/bin/sh
# linger.sh DIR: a configuration command that never ends. It notes its run
# in DIR/runs, then holds DIR/hold, a FIFO the test reads (opening it waits
# for the test, so the test knows the run is noted once its own open
# returns; it reads EOF once every process of the run has died), and waits
# for a child, so that the run is more than the shell bos started.
dir=$1
echo "$BOS_NODES" >>"$dir/runs"
exec 3>"$dir/hold"
sleep 3600 &
wait
